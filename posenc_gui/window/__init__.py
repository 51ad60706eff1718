"""The main window's controllers (:class:`posenc_gui.mainwindow.MainWindow` keeps one of each): its panels
(:mod:`.panels`), docks (:mod:`.docks`; the layouts are :mod:`posenc_gui.dock_layouts`), sessions
(:mod:`.sessions`), settings file (:mod:`.settings`), themes (:mod:`.themes`) and keyboard shortcuts
(:mod:`.shortcuts`). Each takes the window and reaches the others through it.
"""
