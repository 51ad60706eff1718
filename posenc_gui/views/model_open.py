"""Opening a model file in the app: File ▸ Open model…, a drop on the window, the Parameters panel's Open… button.

Every way in ends in :func:`open_model_path`, which opens the model in the
model layer (:func:`~posenc_gui.model.files.model_setup.model_setups`) and sets
the parameters that show it: its learned table as ``learned_file``, its
RoPE set-up as ``rope``, asking which when it has both, and which 2-D
tensor to show as the table when it has neither. A file that cannot be
opened changes nothing; its one-line reason goes to the status bar (the
state's ``message``) and is returned. The dialogs are module functions, so
that tests answer for the user.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QInputDialog, QMessageBox, QWidget

from ..model import EncodingParams
from ..state import AppState

if TYPE_CHECKING:
    from ..model.files.model_setup import ModelSetup, OpenedModel

#: The file dialog's filter: the files a model is read from (config.json and an index stand for their folder).
MODEL_FILTER = ("Model files (*.safetensors *.gguf *.npy *.npz config.json model.safetensors.index.json);;"
                "All files (*)")
#: The files that stand for the Hugging Face folder they are in.
FOLDER_FILES = ("config.json", "model.safetensors.index.json")


def ask_model_file(parent: QWidget | None, folder: str) -> str | None:
    """The model file the user chooses (None when cancelled); tests replace it."""
    path, _ = QFileDialog.getOpenFileName(parent, "Open model", folder, MODEL_FILTER)
    return path or None


def ask_model_folder(parent: QWidget | None, folder: str) -> str | None:
    """The model folder the user chooses (None when cancelled); tests replace it."""
    return QFileDialog.getExistingDirectory(parent, "Open model folder", folder) or None


def ask_setup(parent: QWidget | None, opened: OpenedModel) -> ModelSetup | None:
    """Which of the model's setups to show (its learned table or its RoPE), None when cancelled; tests replace it."""
    box = QMessageBox(parent)
    box.setWindowTitle("Open model")
    box.setTextFormat(Qt.TextFormat.PlainText)
    box.setText(f"{opened.name} has {' and '.join(setup.label for setup in opened.setups)}. Which do you want to see?")
    buttons = {box.addButton(setup.label, QMessageBox.ButtonRole.AcceptRole): setup for setup in opened.setups}
    box.addButton(QMessageBox.StandardButton.Cancel)
    box.exec()
    return buttons.get(box.clickedButton())


def ask_table(parent: QWidget | None, opened: OpenedModel) -> str | None:
    """Which 2-D tensor of a model without position table or RoPE to show as the table; tests replace it."""
    names = [tensor.name for tensor in opened.tables]
    labels = [f"{tensor.name} ({' × '.join(f'{n:,}' for n in tensor.shape)} {tensor.dtype})"
              for tensor in opened.tables]
    label, chosen = QInputDialog.getItem(
        parent, "Open model", f"{opened.name} has no learned position table and no RoPE set-up.\n"
        "Show one of its 2-D tensors as a table of positions × dimensions:", labels, 0, False)
    return names[labels.index(label)] if chosen and label in labels else None


def show_model_problem(parent: QWidget | None, message: str) -> None:
    """Tell the user why a model was not opened (tests replace it)."""
    QMessageBox.warning(parent, "Model not opened", message)


def model_location(path: str) -> str:
    """What to open for the ``path`` a user chose: the folder of a ``config.json``, of an index, or of a
    ``.safetensors`` file beside a ``config.json`` (its configuration says how to read it); else ``path``."""
    folder, name = os.path.split(os.path.abspath(path))
    if name in FOLDER_FILES or (name.endswith(".safetensors") and os.path.isfile(os.path.join(folder, "config.json"))):
        return folder
    return path


def open_model_path(state: AppState, path: str, parent: QWidget | None = None, *,
                    ask: bool = True) -> str | None:
    """Open the model at ``path`` and show it; None, or the one-line reason nothing changed.

    With ``ask``, a model with both a table and RoPE asks which to show, and
    one with neither asks for a tensor (a cancelled question changes
    nothing, and is no problem); without, the table is shown, or nothing.
    The summary (what is shown, the model's notes) or the reason goes to
    ``state.message``.
    """
    # The readers load when a model is opened: the window's first paint reads no file.
    from ..model.files import ModelFileError
    from ..model.files.model_setup import model_setups, one_line

    try:
        opened = model_setups(path)
    except ModelFileError as error:
        return _refused(state, f"Model not opened: {one_line(error)}")
    state.note_model_opened(os.fspath(path))  # the Decoder panel traces it, whatever the parameters show
    try:
        if len(opened.setups) > 1 and ask:
            setup = ask_setup(parent, opened)
        elif not opened.setups and ask and opened.tables:
            tensor = ask_table(parent, opened)
            setup = None if tensor is None else opened.setup(tensor=tensor)
        else:
            setup = opened.setup()
    except ValueError as error:
        return _refused(state, f"Model {opened.name} not opened: {one_line(error)}")
    if setup is None:
        state.message.emit(f"Model {opened.name} not opened: nothing was chosen")
        return None
    problem = state.set_params(setup.params)
    if problem:
        return _refused(state, f"Model {opened.name} not opened: {problem}")
    state.message.emit(opened.summary(setup))
    return None


def _refused(state: AppState, message: str) -> str:
    state.message.emit(message)
    return message


def open_model_dialog(state: AppState, parent: QWidget | None = None, folder: bool = False) -> str | None:
    """Ask for a model file (or folder) and open it; a refusal is also shown in a message box.

    Returns None when it opened or the user cancelled, else the reason.
    """
    start = _start_folder(state.params)
    path = ask_model_folder(parent, start) if folder else ask_model_file(parent, start)
    return None if path is None else open_chosen_path(state, path, parent)


def open_chosen_path(state: AppState, path: str, parent: QWidget | None = None) -> str | None:
    """Open the model at ``path`` a user chose (dropped on the window): as :func:`open_model_path` on
    :func:`model_location`, and a refusal is also shown in a message box. None, or the reason."""
    problem = open_model_path(state, model_location(path), parent)
    if problem:
        show_model_problem(parent, problem)
    return problem


def _start_folder(params: EncodingParams) -> str:
    """Where the file dialog starts: beside the model shown, else the home folder."""
    current = params.options.get("model_path") or ""
    return os.path.dirname(os.path.abspath(current)) if current else os.path.expanduser("~")
