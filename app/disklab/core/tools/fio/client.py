"""fio's client/server mode: one `fio --client=HOST,PORT JOB ...` process for a case whose
`hosts` parameter names several machines, and its report read back per host.

How fio behaves here (measured with fio 3.33, two servers on 127.0.0.2 and 127.0.0.3):
- The client sends each server the *text* of a job file named after its --client=; job options
  on the command line are not sent (they run locally). So the case's job is written as one job
  file per host (its `directory=` is that machine's), `Command.inputs`, which the runner writes.
  Each host's job is named `disklab-HOST`, which is how its figures are told apart.
- Live progress: the client prints fio's ETA line once a second on stdout (all hosts together,
  '[w=11.4G]') with normal or terse output, but none at all with JSON output (not even under
  a pty). So the report is terse (`--output-format=terse --terse-version=3 --output=FILE`): one
  line per server job and, with two jobs or more, an "All clients" line, fio's own total. Terse
  gives sizes in KiB and rates in KiB/s (integers) and latencies in microseconds.
- A server that cannot be reached: 'fio: failed to connect to ADDR:PORT' on stderr, exit 0, and
  no line for it. A server that dies mid-run: 'client: host=ADDR disconnected' in the report
  file, exit 1, no line for it and no "All clients". So every host named by the case but
  absent from the report is reported by name, and the others' figures are kept. A server that
  refuses the job (its directory missing) prints '<host> fio: ...' lines and no result.
- `unlink=1`: the servers remove their test files when the job ends; `thread`: a server's jobs
  are threads of its job process (see fio/__init__.py on setsid).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from disklab.core.tools import get_adapter
from disklab.core.tools.base import Command, ProgressParser, RunTarget, ToolAdapter, ToolOutput
from disklab.core.tools.fio import FioAdapter
from disklab.core.tools.fio.options import (
    PERCENTILES,
    as_job_lines,
    data_files,
    file_name_format,
    job_options,
    moved_bytes,
)
from disklab.core.tools.fio.output import (
    Direction,
    Job,
    check_finite,
    finite,
    job_metrics,
)
from disklab.core.tools.fio.progress import FioProgress
from disklab.core.vocab.errors import ParseError, ToolError
from disklab.core.vocab.model import HostEndpoint, Metric, ProgressUpdate, Scalar

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


def job_name(host: str) -> str:
    return f"disklab-{host}"


def job_text(params: Mapping[str, Any], directory: str, tag: str, host: str = "") -> str:
    """The job file one server runs: the same job everywhere, in that machine's directory,
    named after the host (its report lines say which host they are)."""
    if not _SAFE_VALUE.match(directory):
        raise ToolError(f"a host directory cannot hold a line break: {directory!r}")
    names = file_name_format(f"disklab-{tag}", params)
    lines = ["[global]", "thread", "unlink=1", "", f"[{job_name(host) if host else 'disklab'}]",
             f"directory={directory}", f"filename_format={names}",
             *as_job_lines(job_options(params))]
    return "\n".join(lines) + "\n"


def server_files(params: Mapping[str, Any], target: RunTarget
                 ) -> list[tuple[HostEndpoint, list[str]]]:
    """The data files each server's job makes in its directory (job_text's filename_format,
    one per job): what a killed run leaves on the servers, recorded before the case runs. A
    server puts the address its client named it by before the file name ('127.0.0.21.disklab-
    ...'); both spellings are listed (removing one that is not there makes nothing)."""
    out = []
    for ep in endpoints_of(params, target):
        directory = ep.directory.rstrip("/")
        names = [path.rpartition("/")[2] for path in data_files(directory, target.stem, params)]
        out.append((ep, [f"{directory}/{prefix}{name}" for name in names
                         for prefix in (f"{ep.address}.", "")]))
    return out


def unlink_job(paths: list[str]) -> str:
    """A job file that removes `paths` on a server: each file opened (made, 4 KiB, when it is
    not there), nothing measured (create_only) and unlinked at the job's end."""
    lines = ["[global]", "thread", "size=4k", "create_only=1", "unlink=1"]
    for i, path in enumerate(paths):
        if not _SAFE_VALUE.match(path):
            raise ToolError(f"a path cannot hold a line break: {path!r}")
        lines += ["", f"[disklab-remove-{i}]", f"filename={path}"]
    return "\n".join(lines) + "\n"


def endpoints_of(params: Mapping[str, Any], target: RunTarget) -> list[HostEndpoint]:
    """The endpoints of the case's hosts, in the case's order; ToolError names a missing one."""
    known = {h.name: h for h in target.hosts}
    missing = [h for h in host_names(params) if h not in known]
    if missing:
        raise ToolError(f"no server known for host {', '.join(missing)}")
    return [known[h] for h in host_names(params)]


def client_command(params: Mapping[str, Any], target: RunTarget) -> Command:
    """`fio --client=A,P job.A --client=B,P job.B --output-format=terse --output=FILE`, the job
    files written locally (in the case's directory) by the runner before it starts."""
    base = target.file()
    argv: list[str] = ["fio"]
    inputs = []
    for ep in endpoints_of(params, target):
        path = f"{base}.{ep.name}.job"
        inputs.append((path, job_text(params, ep.directory, target.tag, ep.name)))
        argv += [f"--client={ep.address},{ep.port}", path]
    result = f"{base}.terse"
    argv += ["--output-format=terse", "--terse-version=3", f"--output={result}", "--eta=always"]
    moved = moved_bytes(params)
    planned = moved * len(inputs) if moved is not None else None
    return Command(argv=tuple(argv), cwd=target.directory,
                   files=(*(p for p, _t in inputs), result), result_file=result,
                   planned_bytes=planned, inputs=tuple(inputs))


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
        if (ep.address, ep.port) in refused:  # a case runs only on a server that answered
            failures[ep.name] = (f"its fio server ({where}) stopped answering during the run: "
                                 "it answered at the session's start, now it refused the "
                                 "connection")
        elif ep.address in gone:
            failures[ep.name] = f"its fio server ({where}) disconnected during the run"
        else:
            said = "; ".join(dict.fromkeys(_SERVER_SAID.findall(text)))[:300]
            failures[ep.name] = (f"its fio server ({where}) returned no result"
                                 + (f" (servers said: {said})" if said else ""))
    return failures


# terse version 3 as fio 3.33 prints it: 5 fields, then 41 per direction (read, write), then CPU
_HEAD = 5
_DIR = 41
_DIRS = (("read", _HEAD), ("write", _HEAD + _DIR))
_CPU = _HEAD + 2 * _DIR  # usr%, sys%
_TERSE_FIELDS = _CPU + 2


def _terse_number(fields: list[str], i: int, line: int, what: str) -> float:
    value = finite(fields[i].rstrip("%"))
    if value is None:
        raise ParseError(TOOL, line, f"a number for {what} (terse field {i + 1})", fields[i])
    return value


def _terse_dir(fields: list[str], start: int, line: int, d: str) -> Direction | None:
    """One direction of a terse line; None when it moved nothing. Sizes KiB, times usec."""
    kib = _terse_number(fields, start, line, f"{d} KiB")
    iops = _terse_number(fields, start + 2, line, f"{d} IOPS")
    if not kib and not iops:
        return None
    out = Direction(bw=_terse_number(fields, start + 1, line, f"{d} KiB/s") * 1024, iops=iops,
               io_bytes=kib * 1024,
               runtime_ms=_terse_number(fields, start + 3, line, f"{d} runtime"))
    out.clat_mean = _terse_number(fields, start + 10, line, f"{d} clat mean") * 1000
    out.lat_mean = _terse_number(fields, start + 34, line, f"{d} lat mean") * 1000
    wanted = {float(key): suffix for suffix, key in PERCENTILES}
    for item in fields[start + 12:start + 32]:
        pct, _, value = item.partition("%=")
        p, v = finite(pct), finite(value)
        if p is not None and v is not None and p in wanted:
            out.percentiles[wanted[p]] = v * 1000
    return out


def terse_jobs(text: str) -> list[Job]:
    """The jobs of fio's terse v3 report ('3;fio-3.33;NAME;GROUP;ERROR;...'), in order; the
    disk lines (';vda;...') and the client's messages around them are skipped."""
    jobs = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rsplit("\r", 1)[-1]
        if not line.startswith("3;"):
            continue
        fields = line.split(";")
        if len(fields) < _TERSE_FIELDS:
            raise ParseError(TOOL, number, f"a terse v3 line of at least {_TERSE_FIELDS} "
                             "fields", f"{len(fields)} fields")
        error = _terse_number(fields, 4, number, "the error")
        if not error.is_integer() or not -(2**31) <= error < 2**31:
            raise ParseError(TOOL, number, "an error number", fields[4])
        job = Job(name=fields[2], group=int(_terse_number(fields, 3, number, "the group")),
                   line=number, error=int(error))
        for d, start in _DIRS:
            parsed = _terse_dir(fields, start, number, d)
            if parsed is not None:
                job.dirs[d] = parsed
        job.usr = _terse_number(fields, _CPU, number, "usr CPU")
        job.sys = _terse_number(fields, _CPU + 1, number, "sys CPU")
        jobs.append(job)
    return jobs


def client_metrics(output: ToolOutput, params: Mapping[str, Any],
                   endpoints: list[HostEndpoint]) -> tuple[list[Metric], dict[str, str]]:
    """Per-host rows ({"host": "h1", "hosts": "h1+h2"}) and the aggregate ({"host": "all"}),
    fio's "All clients" figures as it printed them; and host -> failure for the hosts that
    gave none. A host that finished has its complete figures; the aggregate of a run where a
    host failed is noted 'partial' (fio prints none when a server disconnected)."""
    hosts_value = "+".join(ep.name for ep in endpoints)
    by_job = {job_name(ep.name): ep.name for ep in endpoints}
    jobs = terse_jobs(output.result_file or "") or terse_jobs(output.stdout)
    per_host: dict[str, list[Job]] = {}
    totals = [j for j in jobs if j.name == ALL_CLIENTS]
    for job in jobs:
        if job.name == ALL_CLIENTS:
            continue
        name = by_job.get(job.name)
        if name is None:
            raise ParseError(TOOL, job.line, "a job of a host the case named "
                             f"({', '.join(by_job)})", job.name)
        per_host.setdefault(name, []).append(job)
    failures = host_failures(output, endpoints, set(per_host))
    metrics: list[Metric] = []
    for ep in endpoints:
        for job in per_host.get(ep.name, []):
            if job.error:
                failures.setdefault(ep.name, f"its job failed with error {job.error}")
            row: dict[str, Scalar] = {"host": ep.name, "hosts": hosts_value}
            if len(per_host[ep.name]) > 1:
                row["job"] = job.name
            metrics += job_metrics(job, row, f"job error {job.error}" if job.error else None)
    all_row: dict[str, Scalar] = {"host": ALL, "hosts": hosts_value}
    note = f"partial: {', '.join(sorted(failures))} failed" if failures else None
    if totals:
        metrics += job_metrics(totals[-1], all_row, note)
    elif len(endpoints) == 1 and len(per_host.get(endpoints[0].name, [])) == 1 and not failures:
        # one server, one job: fio prints no "All clients", that job's figures are the total
        metrics += job_metrics(per_host[endpoints[0].name][0], all_row, None)
    return check_finite(metrics), failures


def failure_text(failures: Mapping[str, str]) -> str:
    return "; ".join(f"host {name}: {what}" for name, what in failures.items())


class _ClientProgress(ProgressParser):
    """fio's ETA line (all hosts together), and the client's messages about a host."""

    def __init__(self, planned: int | None):
        self.eta = FioProgress(planned)

    def feed(self, stream: str, line: str) -> ProgressUpdate | None:
        text = line.strip()
        if _FAILED_CONNECT.search(text) or _DISCONNECTED.search(text):
            return ProgressUpdate(phase="host failed", message=text)
        return self.eta.feed(stream, line)


class FioClientAdapter(FioAdapter):
    """fio with a `hosts` parameter: the same tool and parameters, run by fio --client on the
    hosts' servers. Chosen by tools.adapter_for(); not registered as a tool of its own: one is
    made per session, with the endpoints its servers were reached at."""

    def build_command(self, params: Mapping[str, Any], target: RunTarget) -> Command:
        return client_command(params, target)

    def __init__(self, endpoints: tuple[HostEndpoint, ...] = ()):
        self.endpoints = endpoints  # the session's servers, to name the failed ones

    def _endpoints(self, params: Mapping[str, Any]) -> list[HostEndpoint]:
        known = {ep.name: ep for ep in self.endpoints}
        return [known.get(n) or HostEndpoint(n, "", 0, "") for n in host_names(params)]

    def parse_result(self, output: ToolOutput, params: Mapping[str, Any]) -> list[Metric]:
        metrics, failures = client_metrics(output, params, self._endpoints(params))
        if failures:
            raise ToolError(failure_text(failures))
        if not metrics:
            raise ParseError(TOOL, None, "fio --client's terse report ('3;fio-...;disklab-HOST;"
                             "...')")
        return metrics

    def parse_partial(self, output: ToolOutput, params: Mapping[str, Any]) -> list[Metric]:
        try:
            return client_metrics(output, params, self._endpoints(params))[0]
        except Exception:
            return []

    def progress_parser(self, params: Mapping[str, Any]) -> ProgressParser:
        moved = FioAdapter().progress_bytes(params)
        return _ClientProgress(moved * len(host_names(params)) if moved is not None else None)


def adapter_for(name: str, params: Mapping[str, Any],
                endpoints: tuple[HostEndpoint, ...] = ()) -> ToolAdapter:
    """The adapter that runs one case: fio with a `hosts` parameter runs as fio --client on
    those hosts' servers (reached at `endpoints`); every other case by its tool's adapter."""
    if name == TOOL and params.get(HOSTS_KEY):
        return FioClientAdapter(endpoints)
    return get_adapter(name)
