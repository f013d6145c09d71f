"""tidal.lowering"""
