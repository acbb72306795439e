"""fio's client/server mode: one `fio --client=HOST,PORT JOB ...` process for a case whose
`hosts` parameter names several machines, and its JSON read back per host.

How fio behaves here (measured with fio 3.33, two servers on 127.0.0.2 and 127.0.0.3):
- The client sends each server the *text* of a job file named after its --client=; job options
  on the command line are not sent (they run locally). So the case's job is written as one job
  file per host (its `directory=` is that machine's), `Command.inputs`, which the runner writes.
- `--output-format=json --output=FILE`: one document with `client_stats`, one entry per server
  job (`hostname` and `port` as the client named them) and, with two servers or more, an
  "All clients" entry: fio's own sum over the servers. With one server there is no such entry,
  and that server's figures are the total.
- A server that cannot be reached: 'fio: failed to connect to ADDR:PORT' on stderr, exit 0, and
  no entry for it. A server that dies mid-run: 'client: host=ADDR disconnected' before the
  document, exit 1, no entry for it and no "All clients". So every host named by the case but
  absent from the document is reported by name, and the others' figures are kept.
- In JSON mode the client prints no ETA line at all (not even under a pty): live progress is
  the client's own messages (servers connecting, disconnecting, failing).
- `unlink=1`: the servers remove their test files when the job ends; `thread`: a server's jobs
  are threads of its job process (see fio.py on setsid).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from disklab.core.errors import ParseError, ToolError
from disklab.core.model import HostEndpoint, Metric, ProgressUpdate, Scalar
from disklab.core.tools import get_adapter
from disklab.core.tools.base import Command, ProgressParser, RunTarget, ToolAdapter, ToolOutput
from disklab.core.tools.fio import (
    MIXED,
    FioAdapter,
    _check_finite,
    _Job,
    _job_metrics,
    _json_documents,
    _json_jobs,
    _param,
)

TOOL = "fio"
HOSTS_KEY = "hosts"  # the test parameter: host names joined with '+' ("h1+h2")
ALL = "all"  # the `host` of the aggregate row
ALL_CLIENTS = "All clients"
_FAILED_CONNECT = re.compile(r"fio: failed to connect to (?P<addr>\S+?):(?P<port>\d+)")
_DISCONNECTED = re.compile(r"client: host=(?P<addr>\S+) disconnected")
_SERVER_SAID = re.compile(r"^<[^>]*> (fio: [^\n]*?)\s*$", re.M)  # a server's error lines
# what a job file line may hold: fio reads 'key=value' up to the end of the line
_SAFE_VALUE = re.compile(r"^[^\n\r\x00]*$")


def host_names(params: Mapping[str, Any]) -> list[str]:
    """The case's hosts in order ("h1+h2" -> ["h1", "h2"]); empty for a local case."""
    value = params.get(HOSTS_KEY)
    return [h for h in str(value).split("+") if h] if value else []


def job_text(params: Mapping[str, Any], directory: str, tag: str) -> str:
    """The job file one server runs: the same job everywhere, in that machine's directory."""
    if not _SAFE_VALUE.match(directory):
        raise ToolError(f"a host directory cannot hold a line break: {directory!r}")
    rw = str(params["rw"])
    lines = ["[global]", "thread", "unlink=1", "", "[disklab]",
             f"directory={directory}", f"filename_format=disklab-{tag}.$jobnum.fio",
             f"rw={rw}", f"bs={int(_param(params, 'bs'))}", f"size={int(params['size'])}",
             f"numjobs={int(_param(params, 'numjobs'))}",
             f"iodepth={int(_param(params, 'iodepth'))}",
             f"ioengine={_param(params, 'ioengine')}",
             f"direct={1 if _param(params, 'direct') else 0}"]
    if rw in MIXED:
        lines.append(f"rwmixread={int(_param(params, 'rwmixread'))}")
    if _param(params, "end_fsync"):
        lines.append("end_fsync=1")
    if int(_param(params, "fsync")) > 0:
        lines.append(f"fsync={int(_param(params, 'fsync'))}")
    runtime = float(_param(params, "runtime"))
    if runtime > 0:
        lines += [f"runtime={_millis(runtime)}", "time_based"]
    ramp = float(_param(params, "ramp_time"))
    if ramp > 0:
        lines.append(f"ramp_time={_millis(ramp)}")
    if _param(params, "group_reporting"):
        lines.append("group_reporting")
    return "\n".join(lines) + "\n"


def _millis(seconds: float) -> str:
    return f"{round(seconds * 1000)}ms"


def endpoints_of(params: Mapping[str, Any], target: RunTarget) -> list[HostEndpoint]:
    """The endpoints of the case's hosts, in the case's order; ToolError names a missing one."""
    known = {h.name: h for h in target.hosts}
    missing = [h for h in host_names(params) if h not in known]
    if missing:
        raise ToolError(f"no server known for host {', '.join(missing)}")
    return [known[h] for h in host_names(params)]


def client_command(params: Mapping[str, Any], target: RunTarget) -> Command:
    """`fio --client=A,P job.A --client=B,P job.B --output-format=json --output=FILE`, the job
    files written locally (in the case's directory) by the runner before it starts."""
    base = f"{target.directory}/disklab-{target.tag}"
    argv: list[str] = ["fio"]
    inputs = []
    for ep in endpoints_of(params, target):
        path = f"{base}.{ep.name}.job"
        inputs.append((path, job_text(params, ep.directory, target.tag)))
        argv += [f"--client={ep.address},{ep.port}", path]
    result = f"{base}.json"
    argv += ["--output-format=json", f"--output={result}"]
    size, jobs = _param(params, "size"), _param(params, "numjobs")
    planned = size * jobs * len(inputs) if isinstance(size, int) and isinstance(jobs, int) \
        else None
    return Command(argv=tuple(argv), cwd=target.directory,
                   files=(*(p for p, _t in inputs), result), result_file=result,
                   planned_bytes=planned, inputs=tuple(inputs))


def _entry_key(entry: Mapping[str, Any]) -> tuple[str, int] | None:
    host, port = entry.get("hostname"), entry.get("port")
    if isinstance(host, str) and isinstance(port, int) and not isinstance(port, bool):
        return host, port
    return None


def host_failures(output: ToolOutput, endpoints: list[HostEndpoint],
                  seen: set[str]) -> dict[str, str]:
    """Host name -> what happened to it, for each host without figures in the document."""
    text = "\n".join(t for t in (output.stdout, output.stderr, output.result_file) if t)
    refused = {(m["addr"], int(m["port"])) for m in _FAILED_CONNECT.finditer(text)}
    gone = {m["addr"] for m in _DISCONNECTED.finditer(text)}
    failures = {}
    for ep in endpoints:
        if ep.name in seen:
            continue
        where = f"{ep.address},{ep.port}"
        if (ep.address, ep.port) in refused:
            failures[ep.name] = f"could not connect to its fio server ({where})"
        elif ep.address in gone:
            failures[ep.name] = f"its fio server ({where}) disconnected during the run"
        else:
            said = "; ".join(dict.fromkeys(_SERVER_SAID.findall(text)))[:300]
            failures[ep.name] = (f"its fio server ({where}) returned no result"
                                 + (f" (servers said: {said})" if said else ""))
    return failures


def client_metrics(output: ToolOutput, params: Mapping[str, Any],
                   endpoints: list[HostEndpoint]) -> tuple[list[Metric], dict[str, str]]:
    """Per-host rows ({"host": "h1", "hosts": "h1+h2"}) and the aggregate ({"host": "all"}),
    fio's "All clients" figures as it printed them; and host -> failure for the hosts that
    gave none. Rows of a failed run carry the note 'partial' on the aggregate only: a host that
    finished has its complete figures."""
    hosts_value = "+".join(ep.name for ep in endpoints)
    by_key = {(ep.address, ep.port): ep.name for ep in endpoints}
    doc = None
    for text in (output.result_file, output.stdout):
        if text and text.strip():
            with_jobs, _last, _error = _json_documents(text)
            if with_jobs is not None:
                doc = with_jobs
                break
    metrics: list[Metric] = []
    seen: set[str] = set()
    if doc is not None:
        line, body = doc
        entries = body.get("client_stats")
        if not isinstance(entries, list):
            raise ParseError(TOOL, line, "a 'client_stats' list in fio --client's JSON document",
                             ", ".join(list(body)[:6]))
        jobs = _json_jobs(line, {**body, "client_stats": [
            e for e in entries if isinstance(e, dict) and e.get("jobname") != ALL_CLIENTS]})
        named = [e for e in entries if isinstance(e, dict) and e.get("jobname") != ALL_CLIENTS]
        aggregate = [e for e in entries if isinstance(e, dict)
                     and e.get("jobname") == ALL_CLIENTS]
        per_host: dict[str, list[_Job]] = {}
        for entry, job in zip(named, jobs, strict=True):
            key = _entry_key(entry)
            name = by_key.get(key) if key else None
            if name is None:
                raise ParseError(TOOL, line, "a client_stats entry of a host the case named "
                                 f"({', '.join(f'{a},{p}' for a, p in by_key)})",
                                 f"{entry.get('hostname')},{entry.get('port')}")
            per_host.setdefault(name, []).append(job)
        failures = host_failures(output, endpoints, set(per_host))
        for ep in endpoints:
            for job in per_host.get(ep.name, []):
                note = f"job error {job.error}" if job.error else None
                if job.error:
                    failures.setdefault(ep.name, f"its job failed with error {job.error}")
                row: dict[str, Scalar] = {"host": ep.name, "hosts": hosts_value}
                if len(per_host[ep.name]) > 1:
                    row["job"] = job.name
                metrics += _job_metrics(job, row, note)
                seen.add(ep.name)
        all_row: dict[str, Scalar] = {"host": ALL, "hosts": hosts_value}
        note = f"partial: {', '.join(sorted(failures))} failed" if failures else None
        if aggregate:
            total = _json_jobs(line, {"client_stats": aggregate[-1:]})[0]
            metrics += _job_metrics(total, all_row, note)
        elif len(endpoints) == 1 and len(jobs) == 1 and not failures:
            metrics += _job_metrics(jobs[0], all_row, None)  # one server: its figures are all
    else:
        failures = host_failures(output, endpoints, set())
    return _check_finite(metrics), failures


def failure_text(failures: Mapping[str, str]) -> str:
    return "; ".join(f"host {name}: {what}" for name, what in failures.items())


class _ClientProgress(ProgressParser):
    """The client's own messages while it runs (JSON mode prints no ETA line)."""

    def feed(self, stream: str, line: str) -> ProgressUpdate | None:
        text = line.strip()
        if _FAILED_CONNECT.search(text) or _DISCONNECTED.search(text):
            return ProgressUpdate(phase="host failed", message=text)
        if text.startswith("hostname="):
            return ProgressUpdate(phase="running", message=text)
        return None


class FioClientAdapter(FioAdapter):
    """fio with a `hosts` parameter: the same tool and parameters, run by fio --client on the
    hosts' servers. Chosen by tools.adapter_for(); not registered as a tool of its own: one is
    made per session, with the endpoints its servers were reached at."""

    def build_command(self, params: Mapping[str, Any], target: RunTarget) -> Command:
        return client_command(params, target)

    def __init__(self, endpoints: tuple[HostEndpoint, ...] = ()):
        self.endpoints = endpoints  # the session's servers, to match the JSON's hostname/port

    def _endpoints(self, params: Mapping[str, Any]) -> list[HostEndpoint]:
        known = {ep.name: ep for ep in self.endpoints}
        return [known.get(n) or HostEndpoint(n, "", 0, "") for n in host_names(params)]

    def parse_result(self, output: ToolOutput, params: Mapping[str, Any]) -> list[Metric]:
        metrics, failures = client_metrics(output, params, self._endpoints(params))
        if failures:
            raise ToolError(failure_text(failures))
        if not metrics:
            raise ParseError(TOOL, None, "a fio --client JSON document with client_stats")
        return metrics

    def parse_partial(self, output: ToolOutput, params: Mapping[str, Any]) -> list[Metric]:
        try:
            return client_metrics(output, params, self._endpoints(params))[0]
        except Exception:
            return []

    def progress_parser(self, params: Mapping[str, Any]) -> ProgressParser:
        return _ClientProgress()


def adapter_for(name: str, params: Mapping[str, Any],
                endpoints: tuple[HostEndpoint, ...] = ()) -> ToolAdapter:
    """The adapter that runs one case: fio with a `hosts` parameter runs as fio --client on
    those hosts' servers (reached at `endpoints`); every other case by its tool's adapter."""
    if name == TOOL and params.get(HOSTS_KEY):
        return FioClientAdapter(endpoints)
    return get_adapter(name)
