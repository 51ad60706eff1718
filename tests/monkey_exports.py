"""The monkey's exports, handouts, sessions and copies: where the file dialog answers they go (good and bad
targets), and what each outcome must be (a mixin of :class:`monkey.Monkey`).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QAbstractButton, QApplication

from posenc_gui.views import handout_ui
from posenc_gui.views.export_ui import ExportDialog, copy_panel_figure, dock_export_menu


# ------------------------------------------------------------------ exports
@dataclass(frozen=True)
class Target:
    """Where the file dialog answers that an export should go, and whether that should work."""

    kind: str
    path: str | None  # None: the dialog was cancelled

    @property
    def good(self) -> bool:
        return self.kind in ("new", "overwrite", "no extension")


MAGIC = {"png": b"\x89PNG", "pdf": b"%PDF", "npy": b"\x93NUMPY"}


class ExportActions:
    """Exporting panels and the window, the export and handout dialogs, sessions and the clipboard copy.

    A mixin of :class:`monkey.Monkey`: it uses its ``window``, ``rng``, ``folder``, ``out``, ``as_folder``,
    ``unwritable``, ``_target_kinds``, ``_exports``, the dialog answers (``_answer``, ``_asked``,
    ``_session_answer``), the message lists, ``_problems``, ``_next``, ``_type``, ``_describe`` and
    ``_menu_actions``.
    """

    # ------------------------------------------------------------- targets
    def _unwritable_folder(self) -> Path | None:
        """A folder this process cannot create files in (chmod does not stop root: then /sys or /proc)."""
        folder = self.folder / "read-only"
        folder.mkdir(exist_ok=True)
        folder.chmod(0o555)
        for candidate in (folder, Path("/sys"), Path("/proc/self")):
            try:
                probe = tempfile.NamedTemporaryFile(dir=candidate)
            except OSError:
                return candidate
            probe.close()
        return None

    def _target(self, fmt: str) -> Target:
        self._files += 1
        name = f"export{self._files}"
        kind = self._next(self._target_kinds)
        paths = {
            "new": self.out / f"{name}.{fmt}",
            "overwrite": self.out / f"existing.{fmt}",
            "no extension": self.out / name,
            "missing folder": self.folder / "missing" / f"{name}.{fmt}",
            "folder as target": self.as_folder.with_suffix(f".{fmt}"),
            "unknown extension": self.out / f"{name}.bmp",
            "read-only folder": (self.unwritable or self.out) / f"{name}.{fmt}",
        }
        if kind == "overwrite":
            paths[kind].write_bytes(b"old")
        if kind == "folder as target":
            paths[kind].mkdir(exist_ok=True)
        return Target(kind, None if kind == "cancel" else str(paths[kind]))

    def _export(self, fmt: str, target: Target, export: Callable[[], Any], asks: bool = True) -> None:
        """Run ``export`` with the file dialog answering ``target``; check the outcome."""
        self._describe(f"{target.kind} {target.path}")
        self._answer = target
        messages, asked = len(self.export_messages), self._asked
        export()
        self._answer = None
        new = self.export_messages[messages:]
        if asks and self._asked == asked:
            self._problems.append("the export did not ask for a file name")
        written = Path(target.path + (f".{fmt}" if target.kind == "no extension" else "")) if target.path else None
        if target.kind == "cancel":
            if new:
                self._problems.append(f"a cancelled export said {new}")
            return
        if target.good:
            if new:  # refused, saying why (a matrix too large for a data file, …)
                self.refused_good.append(new[-1])
                self._describe(f"refused: {new[-1]}")
            elif not written.is_file() or written.stat().st_size == 0 or written.read_bytes() == b"old":
                self._problems.append(f"a good export to {written} wrote nothing and said nothing")
            elif not written.read_bytes().startswith(MAGIC.get(fmt, b"")):
                self._problems.append(f"{written} does not start like a .{fmt} file")
            return
        if not new:
            self._problems.append(f"an export to a bad target ({target.kind}: {target.path}) gave no message")
        elif written is not None and written.is_file():
            self._problems.append(f"an export to a bad target ({target.kind}) wrote {written}")
        self._describe(f"said: {new[-1][:100]}")

    # ------------------------------------------------------------- actions
    def act_export(self) -> None:
        """A panel's Export button or its dock's right-click menu: one format, the dialog answering."""
        window = self.window
        panel_id, fmt = self._next(self._exports)
        sources = [dock_export_menu(window, panel_id, window.docks[panel_id]).actions()]
        if panel_id in window.export_buttons:
            sources.append(window.export_buttons[panel_id].menu().actions())
        actions = self.rng.choice(sources)
        action = next(a for a in actions if a.objectName() == f"export-{panel_id}-{fmt}")
        self._describe(f"{panel_id} as {fmt}")
        self._export(fmt, self._target(fmt), action.trigger)

    def act_export_window(self) -> None:
        """File ▸ Export window as PNG…"""
        action = next(a for a in self._menu_actions() if a.text().replace("&", "").startswith("Export window"))
        fmt = "png"
        target = self._target(fmt)
        if target.kind == "unknown extension":
            target = Target(target.kind, str(Path(target.path).with_suffix(".svg")))  # a window is PNG only
        self._describe("window as PNG")
        self._export(fmt, target, action.trigger)

    def act_export_dialog(self, action: Any = None) -> None:
        """File ▸ Export…: choose the panel, format, size and file, then Export (or Cancel)."""
        if action is None:
            action = next(a for a in self._menu_actions() if a.text().replace("&", "") == "Export…")
        action.trigger()
        QApplication.processEvents()
        dialogs = [d for d in self.window.findChildren(ExportDialog) if d.isVisible()]
        if len(dialogs) != 1:
            self._problems.append(f"File ▸ Export… showed {len(dialogs)} dialogs")
            return
        dialog = dialogs[0]
        try:
            dialog.panel_box.setCurrentIndex(self.rng.randrange(dialog.panel_box.count()))
            dialog.format_box.setCurrentIndex(self.rng.randrange(dialog.format_box.count()))
            if dialog.fmt == "png" and self.rng.random() < 0.5:
                spin = self.rng.choice([dialog.scale_spin, dialog.width_spin])
                text = self.rng.choice(["1", "2.5", "0.5", "abc", "", "99999", "16", "640"])
                self._type(spin, text)
            fmt, panel_id = dialog.fmt, dialog.panel_id
            target = self._target(fmt)
            self._describe(f"{panel_id} as {fmt}")
            if target.kind == "cancel":
                cancel = next(b for b in dialog.findChildren(QAbstractButton) if b.text().replace("&", "") == "Cancel")
                QTest.mouseClick(cancel, Qt.MouseButton.LeftButton)
                if dialog.isVisible():
                    self._problems.append("Cancel left the export dialog open")
                return
            if self.rng.random() < 0.5:  # Browse… (the file dialog) or typing the path
                browse = next(b for b in dialog.findChildren(QAbstractButton) if b.text() == "Browse…")
                self._answer = target
                QTest.mouseClick(browse, Qt.MouseButton.LeftButton)
                self._answer = None
            else:
                dialog.path_edit.setFocus()
                dialog.path_edit.selectAll()
                QApplication.clipboard().setText(target.path)
                QTest.keyClick(dialog.path_edit, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
            if not dialog.export_button.isEnabled():  # a size past the memory budget: said where it is chosen
                if not dialog.size_label.text():
                    self._problems.append("the export dialog greys Export and says no reason")
                self._describe(f"Export greyed: {dialog.size_label.text()[:100]}")
                return
            self._export(dialog.fmt, target, lambda: QTest.mouseClick(dialog.export_button, Qt.MouseButton.LeftButton),
                         asks=False)
        finally:
            if dialog.isVisible():
                dialog.reject()
            dialog.deleteLater()

    def act_handout(self, action: Any) -> None:
        """File ▸ Export handout…: cancel, or write two ticked panels as a PDF or a folder (checked)."""
        action.trigger()
        QApplication.processEvents()
        dialogs = [d for d in self.window.findChildren(handout_ui.HandoutDialog) if d.isVisible()]
        if len(dialogs) != 1:
            self._problems.append(f"File ▸ Export handout… showed {len(dialogs)} dialogs")
            return
        dialog = dialogs[0]
        try:
            if self.rng.random() < 0.3:
                self._describe("handout — cancel")
                dialog.reject()
                return
            for row in range(dialog.panel_list.count()):  # two panels: a handout of all takes too long here
                item = dialog.panel_list.item(row)
                item.setCheckState(Qt.CheckState.Checked if row in (0, 4) else Qt.CheckState.Unchecked)
            form = self.rng.choice(list(handout_ui.FORMS))
            dialog.form_box.setCurrentIndex(dialog.form_box.findData(form))
            count = len(self._handouts)
            target = self.out / (f"handout{count}.pdf" if form == "pdf" else f"handout{count}/")
            dialog.path_edit.setText(str(target))
            messages = len(self.export_messages)
            dialog._save()
            new = self.export_messages[messages:]
            self._describe(f"handout — {form} {target.name}" + (f" — said: {new[-1][:100]}" if new else ""))
            written = target if form == "pdf" else target / "index.html"
            if not new and not (written.is_file() and written.stat().st_size > 0):
                self._problems.append(f"a handout to {target} wrote nothing and said nothing")
            if form == "pdf" and written.is_file() and not written.read_bytes().startswith(b"%PDF"):
                self._problems.append(f"{written} is no PDF")
            self._handouts.append(target)
        finally:
            if dialog.isVisible():
                dialog.reject()
            dialog.deleteLater()

    def act_session(self, action: Any, saving: bool) -> None:
        """Save a session file, or open a saved one, a hostile one, a folder or a missing one (nothing may change)."""
        if saving:
            target = self.out / f"session{len(self._sessions)}.json"
        else:
            target = self.rng.choice([*self._sessions, self._hostile_session, self.as_folder, self.out / "none.json"])
        before = self.window.current_session()
        messages = len(self.session_messages)
        self._session_answer = target
        try:
            action.trigger()
        finally:
            self._session_answer = None
        refused = self.session_messages[messages:]
        self._describe(f"{'save' if saving else 'open'} {target.name}" + (f" — said: {refused[-1]}" if refused else ""))
        if saving and not refused:
            self._sessions.append(target)
        if refused and not saving and self.window.current_session() != before:
            self._problems.append(f"opening {target.name} was refused but changed the window: {refused[-1]}")
        if not refused and target not in self._sessions:
            self._problems.append(f"{target.name} was opened without a word")

    def act_copy(self) -> None:
        panel_id = self.rng.choice([None, *self.window.docks])
        self._describe(f"copy {panel_id or 'the current panel'}")
        messages = len(self.export_messages)
        copy_panel_figure(self.window, panel_id)
        if len(self.export_messages) > messages:
            self._describe(f"refused: {self.export_messages[-1]}")
