"""The main window's controllers (:class:`posenc_gui.mainwindow.MainWindow` keeps one of each): its panels
(:mod:`.panels`), docks (:mod:`.docks`; their layouts by family :mod:`.layouts`, finding a panel by name
:mod:`.navigation`), sessions (:mod:`.sessions`), settings file (:mod:`.settings`), themes (:mod:`.themes`),
keyboard shortcuts (:mod:`.shortcuts`) and the status bar's message line (:mod:`.status_line`). Each takes the
window and reaches the others through it.
"""
