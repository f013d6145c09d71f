"""tidal.passes"""
