"""Every package of the source tree is listed for installation (pyproject.toml lists them by name)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_subpackage_of_posenc_gui_is_installed():
    listed = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    packages = sorted(".".join(init.parent.relative_to(ROOT).parts) for init in (ROOT / "posenc_gui").rglob("__init__.py"))
    assert "posenc_gui.model.schemes" in packages  # the scan finds nested packages
    missing = [name for name in packages if f'"{name}"' not in listed]
    assert missing == [], f"add to [tool.setuptools] packages in pyproject.toml: {missing}"
