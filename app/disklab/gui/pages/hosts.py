"""Hosts page: the machines a fio test runs on at once (fio's client/server engine), kept in the
plan's [hosts.*] tables; add, remove, and test a connection (the host's fio version and a few
facts, from a probe job its server runs).

A test's `hosts` axis is written in the plan (`hosts = [["h1"], ["h1", "h2"]]`, also from the
"Use as axis" button here); per-host rows and the "all" total come from the results' params.

ssh's configuration is the user's own (~/.ssh/config, or the file kept here in DiskLab's
settings): a plan never names one, since an ssh_config can run commands.

SSH asks questions a person must answer (an unknown host key with its fingerprint, a password, a
passphrase): SshQuestions shows them as dialogs, from whichever thread ssh runs on, once per
host per session; an answer is handed to ssh and never kept.
"""

from __future__ import annotations

import functools
import threading
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from disklab.core.hosts.config import DEFAULT_PORT, is_loopback, read_hosts
from disklab.core.hosts.servers import Servers
from disklab.core.hosts.ssh_settings import SshSettingsError, chosen_ssh_config, save_ssh_config
from disklab.gui.state import Workbench
from disklab.gui.threads import ask_in_gui_thread, run_in_background

COLUMNS = ("Name", "Address", "Port", "Start", "Directory", "Status")
SECURITY = ("<b>Security:</b> a fio server runs any job it is sent, unauthenticated, as the "
            "user that started it. With <i>ssh</i> (the default) DiskLab starts it on the "
            "remote's loopback only and reaches it through the SSH connection; a server that "
            "is already <i>running</i> on an address is open to whoever can reach that port.")


class _Problems:
    """The plan checker's interface for one host table: the errors, warnings dropped (the page
    shows its own)."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def error(self, key: str, message: str) -> None:
        self.problems.append(f"{key}: {message}")

    def warn(self, key: str, message: str) -> None:
        pass


class SshQuestions(QObject):
    """ssh's questions as dialogs. `ask` may be called from any thread (a connection test in
    the pool, a run's worker): the question is asked in the GUI thread (gui.threads) and the
    asking thread waits for the person's answer; once the window closes (decline_all), every
    question is declined at once, so no thread waits for a dialog that will not come."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.parent_widget = parent
        self.declined = threading.Event()  # plain Python: read from any thread

    def ask(self, host: str, question: str, secret: bool) -> str | None:
        if self.declined.is_set():
            return None
        return ask_in_gui_thread(lambda: self.dialog(host, question, secret), self,
                                 self.declined)

    def decline_all(self) -> None:
        """The window closes: questions waiting, and any asked later, get no answer."""
        self.declined.set()

    def dialog(self, host: str, question: str, secret: bool) -> str | None:
        """The dialog itself (replaced in tests): yes/no for a host key, a hidden field for a
        password or a passphrase; None when the person declines."""
        title = f"SSH to host {host}"
        if not secret:
            answer = QMessageBox.question(self.parent_widget, title, question)
            return "yes" if answer == QMessageBox.StandardButton.Yes else "no"
        text, ok = QInputDialog.getText(self.parent_widget, title, question,
                                        QLineEdit.EchoMode.Password)
        return text if ok else None


class HostsPage(QWidget):
    title = "Hosts"
    tested = Signal(str)  # a connection test ended (host name)

    def __init__(self, wb: Workbench, parent: QWidget | None = None):
        super().__init__(parent)
        self.wb = wb
        self.questions = SshQuestions(self)
        self.wb.runs.ask = self.questions.ask  # a run's SSH hosts ask through these dialogs
        self.status: dict[str, str] = {}  # host -> what the last test said
        lay = QVBoxLayout(self)
        intro = QLabel("<b>Machines that run a fio test at once.</b> Each runs <tt>fio "
                       "--server</tt>; one fio client here sends them the same job and reports "
                       "each host and the total (fio's \"All clients\").")
        intro.setWordWrap(True)
        lay.addWidget(intro)
        security = QLabel(SECURITY)
        security.setWordWrap(True)
        lay.addWidget(security)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        lay.addWidget(self.table)
        self.warning = QLabel()
        self.warning.setWordWrap(True)
        self.warning.setStyleSheet("color: #b35c00")
        lay.addWidget(self.warning)
        buttons = QHBoxLayout()
        self.remove_button = QPushButton("Remove")
        self.test_button = QPushButton("Test connection")
        self.axis_button = QPushButton("Use as axis of the fio tests")
        self.axis_button.setToolTip("hosts = [[\"h1\"], [\"h1\", \"h2\"], ...]: one host, then "
                                    "two, ... (the scaling curve) on every fio test")
        for b in (self.remove_button, self.test_button, self.axis_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        lay.addLayout(buttons)

        box = QGroupBox("Add a host")
        form = QFormLayout(box)
        self.name_edit = QLineEdit()
        self.name_edit.setPlaceholderText("h1")
        self.address_edit = QLineEdit()
        self.address_edit.setPlaceholderText("node1 (as in your SSH config)")
        self.port_spin = QSpinBox()
        self.port_spin.setRange(1, 65535)
        self.port_spin.setValue(DEFAULT_PORT)
        self.start_combo = QComboBox()
        self.start_combo.addItem("ssh: DiskLab starts it over SSH (loopback only)", "ssh")
        self.start_combo.addItem("running: already started (unauthenticated)", "running")
        self.directory_edit = QLineEdit("/tmp")
        self.user_edit = QLineEdit()
        self.user_edit.setPlaceholderText("from your SSH config")
        form.addRow("Name", self.name_edit)
        form.addRow("Address", self.address_edit)
        form.addRow("fio server port", self.port_spin)
        form.addRow("Start", self.start_combo)
        form.addRow("Directory there", self.directory_edit)
        form.addRow("SSH user", self.user_edit)
        self.add_button = QPushButton("Add")
        form.addRow(self.add_button)
        self.message = QLabel()
        self.message.setWordWrap(True)
        form.addRow(self.message)
        lay.addWidget(box)
        lay.addWidget(self._ssh_config_box())

        self.add_button.clicked.connect(self.add_from_form)
        self.remove_button.clicked.connect(self.remove_selected)
        self.test_button.clicked.connect(self.test_selected)
        self.axis_button.clicked.connect(self.use_as_axis)
        self.wb.draft_changed.connect(self.refresh)
        self.refresh()

    def _ssh_config_box(self) -> QGroupBox:
        """The user's own ssh_config for the hosts started over SSH (kept in DiskLab's
        settings, core.hosts.ssh_settings): a plan never names one."""
        box = QGroupBox("SSH configuration (yours, never the plan's)")
        form = QFormLayout(box)
        self.ssh_config_edit = QLineEdit()
        self.ssh_config_edit.setPlaceholderText("empty: ssh reads your ~/.ssh/config")
        self.ssh_config_button = QPushButton("Keep")
        self.ssh_config_message = QLabel()
        self.ssh_config_message.setWordWrap(True)
        try:
            self.ssh_config_edit.setText(chosen_ssh_config() or "")
        except SshSettingsError as e:  # the hosts started over SSH fail with the same words
            self.ssh_config_message.setText(str(e))
        form.addRow("ssh_config file (ssh -F)", self.ssh_config_edit)
        form.addRow(self.ssh_config_button)
        form.addRow(self.ssh_config_message)
        self.ssh_config_button.clicked.connect(self.keep_ssh_config)
        return box

    def keep_ssh_config(self) -> None:
        """Keep the field's file as the user's ssh_config (empty: ssh's own default)."""
        value = self.ssh_config_edit.text().strip()
        try:
            save_ssh_config(value or None)
        except SshSettingsError as e:
            self.ssh_config_message.setText(str(e))
            return
        self.ssh_config_message.setText(f"ssh reads {value}" if value
                                        else "ssh reads your ~/.ssh/config")

    # --- the draft's [hosts.*]
    def hosts_doc(self) -> dict[str, dict[str, Any]]:
        return self.wb.draft.doc.setdefault("hosts", {})

    def refresh(self) -> None:
        hosts = self.wb.draft.doc.get("hosts") or {}
        self.table.setRowCount(len(hosts))
        plain = []
        for row, (name, table) in enumerate(hosts.items()):
            start = table.get("start", "ssh")
            values = (name, table.get("address", ""), table.get("port", DEFAULT_PORT), start,
                      table.get("directory", "/tmp"), self.status.get(name, ""))
            for col, value in enumerate(values):
                item = QTableWidgetItem(str(value))
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
                self.table.setItem(row, col, item)
            if start == "running":
                where = "this machine's users" if is_loopback(str(table.get("address"))) \
                    else "anyone who can reach it"
                plain.append(f"{name} ({table.get('address')}:{table.get('port', DEFAULT_PORT)}"
                             f", open to {where})")
        self.warning.setText("Unauthenticated fio servers: " + "; ".join(plain)
                             if plain else "")

    def add_from_form(self) -> None:
        table: dict[str, Any] = {"address": self.address_edit.text().strip(),
                                 "port": self.port_spin.value(),
                                 "start": self.start_combo.currentData(),
                                 "directory": self.directory_edit.text().strip()}
        if self.user_edit.text().strip() and table["start"] == "ssh":
            table["user"] = self.user_edit.text().strip()
        name = self.name_edit.text().strip()
        problem = self.add(name, table)
        self.message.setText(problem or f"added {name}")

    def add(self, name: str, table: dict[str, Any]) -> str | None:
        """Add a host to the draft after the plan's own checks; the first problem, or None."""
        check = _Problems()
        if name in self.hosts_doc():
            return f"hosts.{name}: there is a host of that name"
        read_hosts({"hosts": {name: table}}, check, self._base_dir())
        if check.problems:
            return check.problems[0]
        self.hosts_doc()[name] = table
        self.wb.touch()
        return None

    def _base_dir(self) -> Path:
        return Path(self.wb.draft.path).parent if self.wb.draft.path else Path.cwd()

    def selected(self) -> str | None:
        rows = {i.row() for i in self.table.selectedItems()}
        if len(rows) != 1:
            return None
        item = self.table.item(rows.pop(), 0)
        return item.text() if item is not None else None

    def remove_selected(self) -> None:
        name = self.selected()
        if name is not None:
            self.hosts_doc().pop(name, None)
            self.wb.touch()

    def use_as_axis(self) -> None:
        """Every fio test runs on the first host, then the first two, ... (the scaling curve)."""
        names = list(self.hosts_doc())
        if not names:
            return
        axis = [names[:n] for n in range(1, len(names) + 1)]
        for test in self.wb.draft.tests:
            if test.get("tool") == "fio":
                test["hosts"] = axis
        self.wb.touch()

    def test_selected(self) -> None:
        name = self.selected()
        if name is not None:
            self.test_host(name)

    def test_host(self, name: str) -> None:
        """Reach (or start over SSH), probe, and stop the host's server, in the pool; the
        status column shows its fio version and facts, or what went wrong."""
        table = self.hosts_doc().get(name)
        if table is None:
            return
        # only the host's last test is shown (`latest`): a test of its old address that answers
        # after this one (a timeout ends later than a refusal) must not replace this one's
        done = functools.partial(self._tested, name)
        check = _Problems()
        hosts = read_hosts({"hosts": {name: table}}, check, self._base_dir())
        if check.problems or not hosts:
            problem = ValueError(check.problems[0] if check.problems else "not a host")
            run_in_background(functools.partial(_refuse, problem), done, self,
                              latest=f"test {name}")
            return
        self.status[name] = "testing..."
        self.refresh()

        def reach() -> dict[str, Any]:
            servers = Servers(hosts, self.questions.ask)
            try:
                messages = servers.start()
                facts = dict(servers.facts()[name])
                facts["messages"] = messages
                return facts
            finally:
                servers.close()

        run_in_background(reach, done, self, latest=f"test {name}")

    def _tested(self, name: str, facts: dict[str, Any] | None, error: Exception | None) -> None:
        if error is not None:
            self.status[name] = f"failed: {error}"
        elif facts is not None and facts.get("error"):
            self.status[name] = str(facts["error"])
        elif facts is not None:
            fs = facts.get("filesystem") or {}
            bits = [facts.get("fio"), facts.get("hostname"), facts.get("kernel") or
                    facts.get("os"), facts.get("arch"),
                    f"{facts['cpus']} CPUs" if facts.get("cpus") else None,
                    f"{fs.get('fstype')} on {fs.get('source')}" if fs else None]
            disks = ", ".join(facts.get("disks") or [])
            self.status[name] = " · ".join(str(b) for b in bits if b) + (
                f" · disk {disks}" if disks else "")
            for message in facts.get("messages") or []:
                self.status[name] += f" ({message})"
        self.refresh()
        self.tested.emit(name)


def _refuse(problem: Exception) -> None:
    """A host that cannot be tested: its problem, reported the way a test's failure is."""
    raise problem
