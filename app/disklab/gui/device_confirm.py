"""The typed confirmation of every device DiskLab destroys: the target (the Target page) and
the external journal or log devices a configuration's mkfs names (the Configurations page).
Each is classified first (a refused device is said at its field) and kept, with its identity,
only once its path is typed back. One home for both pages, because a wipe is asked the same
way wherever it is chosen."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QInputDialog, QWidget

from disklab.core.system.devices import Device, classify, describe, identity_of
from disklab.core.vocab.errors import DisklabError


def destroy_question(dev: Device, by: str) -> str:
    """What the confirmation says: the device by the facts known, never 'None'."""
    return (f"Everything on {describe(dev)} will be destroyed by {by}.\n"
            "Type the device path to confirm:")


def ask_destroy(parent: QWidget, dev: Device, by: str) -> tuple[bool, str]:
    """The typed confirmation of every device DiskLab destroys (the target, an external journal
    or log device): what is on it, and its path typed back. Returns (confirmed, what to tell
    the user when not): a wrong path is said to be wrong at the field, never dropped silently;
    Cancel says nothing."""
    text, ok = QInputDialog.getText(parent, "Destroy the data on this device?",
                                    destroy_question(dev, by))
    if not ok:
        return False, ""
    if text.strip() == dev.path:
        return True, ""
    typed = text.strip()
    return False, (f"{typed!r} is not {dev.path}: not chosen (type the path exactly)" if typed
                   else f"nothing typed: {dev.path} not chosen")


class DeviceConfirms:
    """A configuration form's external devices, per mkfs option (journal_device, log_device):
    the path confirmed with its identity, or the path refused and why. Kept apart from the
    form, which is rebuilt whenever the filesystem changes."""

    def __init__(self, parent: QWidget, library_path: Callable[[], str]) -> None:
        self.parent = parent
        self.library_path = library_path  # a library's own device is refused (classify)
        self.confirmed: dict[str, tuple[str, str]] = {}  # option -> (path, identity) typed back
        self.refused: dict[str, tuple[str, str]] = {}  # option -> (path, why refused)

    def value(self, name: str, path: str) -> str | dict[str, str]:
        """The option's value in the [[config]] table: the path, and its identity once the
        path was typed back (the plan loader reads it as the confirm)."""
        confirmed = self.confirmed.get(name)
        if confirmed and confirmed[0] == path:
            return {"path": path, "confirm": confirmed[1]}
        return path

    def problems(self, typed: Callable[[str], str | None]) -> dict[str, str]:
        """'mkfs.<option>' -> why, for each option whose path, as typed now (`typed(option)`),
        was refused."""
        return {f"mkfs.{name}": message for name, (path, message) in self.refused.items()
                if typed(name) == path}

    def ask(self, name: str, path: str) -> bool:
        """Classify the device at `path` and, unless it is refused, ask for its path typed
        back. False when there is nothing to ask (no path, or this one confirmed already);
        True when the form's table is to be stored again."""
        confirmed = self.confirmed.get(name)
        if not path or (confirmed and confirmed[0] == path):
            return False
        try:
            dev = classify(path, self.library_path())
        except DisklabError as e:
            self.refused[name] = (path, str(e))
            return True
        if dev.refused:
            self.refused[name] = (path, f"{path} refused: class {dev.safety}: "
                                        f"{'; '.join(dev.reasons)}")
            return True
        ok, why = ask_destroy(self.parent, dev, f"formatting it as the {name.replace('_', ' ')}")
        if ok:
            self.confirmed[name] = (path, identity_of(dev))
            self.refused.pop(name, None)
        elif why:  # a wrong path typed back: said at the field, until it is typed right
            self.refused[name] = (path, why)
        return True
