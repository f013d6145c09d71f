"""tidal.runtime"""
