"""Adapter of fio: argv builder, JSON and normal-output parsers, ETA-line progress.

How fio is run (measured on fio 3.33; tests/fixtures/fio/README.md has the captures):
- `--thread` always: without it every job is a forked process that calls setsid(), so killing
  fio's process group leaves the jobs doing I/O, re-parented to init.
- `--output-format=json --output=FILE --eta=always`: the JSON goes to FILE while stdout keeps one
  '\\r'-terminated ETA line a second. JSON on stdout suppresses the ETA lines entirely, even with
  --eta=always. `--eta-newline` adds nothing: the runner splits lines on '\\r' as well.
- The JSON is not always pure JSON: fio writes error lines ('fio: pid=..., err=28/...') and
  'fio: terminating on signal 15' into the same stream before the document, and
  --status-interval concatenates documents; the parser takes the last complete document.
- Read-type jobs lay out their files in an unmeasured `--create_only=1` step first, so that the
  runner can drop the page cache before a buffered read.
- Without --group_reporting each job's figures are fio's own, over that job's runtime (a slow
  job shows as slow), one row per job ({"job": name}). Jobs of one group also give the group's
  NAME, the total over the longest runtime as fio's 'Run status group' line has it (not the sum
  of the jobs' rates), and NAME:min_proc/max_proc/avg_proc, the slowest, fastest and mean job,
  named as iozone's per-process and the engine's per-stream figures.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from disklab.core.tools.base import (
    Capabilities,
    Command,
    Measured,
    ParamSpec,
    ProgressParser,
    RunTarget,
    StreamFigures,
    ToolAdapter,
    ToolOutput,
    placement,
    placement_metrics,
    stream_directories,
)
from disklab.core.tools.fio.options import (
    DIRECTIONS,
    ENGINES,
    LAYOUT_OPTIONS,
    MIXED,
    PARAMS,
    READS_FIRST,
    SYNC_ENGINES,
    TOOL,
    as_arguments,
    data_files,
    file_name_format,
    job_options,
    moved_bytes,
    param_value,
)
from disklab.core.tools.fio.output import (
    Direction,
    Job,
    check_finite,
    disk_util,
    fio_messages,
    jobs_metrics,
    json_documents,
    json_jobs,
    sniff,
    text_jobs,
)
from disklab.core.tools.fio.passthrough import (
    TABLE,
    canonical_name,
    files_per_job,
    is_switch,
    option_list,
    option_problem,
    option_value,
    paced_rate,
    parse_only_problems,
    passed_options,
)
from disklab.core.tools.fio.progress import FioProgress
from disklab.core.tools.fio.timing import job_intervals
from disklab.core.vocab.errors import ParseError, ToolError
from disklab.core.vocab.model import (
    UNIT_THROUGHPUT,
    Metric,
)


def _engine(params: Mapping[str, Any]) -> str:
    """The case's engine (the first of a test's axis of them): one of ENGINES."""
    engine = param_value(params, "ioengine")
    engine = engine[0] if isinstance(engine, tuple) and engine else engine
    return engine if engine in ENGINES else "psync"


def _bs(params: Mapping[str, Any]) -> int:
    bs = param_value(params, "bs")
    return int(bs) if isinstance(bs, int) else 4096


class FioAdapter(ToolAdapter):
    name = "fio"
    title = "fio (flexible I/O tester)"
    executable = "fio"
    package = "fio"
    capabilities = Capabilities(live_progress=True, direct_io=True, tests=DIRECTIONS,
                                placeable=True, raw_device=True, importable=True)
    rank = 3
    params: Mapping[str, ParamSpec] = PARAMS
    options_table = TABLE

    def option_value(self, name: str, value: Any) -> Any:
        """Any fio job option DiskLab does not set itself (passthrough.py says which not)."""
        problem = option_problem(name)
        if problem is not None:
            raise ValueError(problem)
        return option_value(name, value)

    def options_check_argv(self, params: Mapping[str, Any]) -> tuple[str, ...] | None:
        """fio --parse-only with the case's whole job, as it would run (its engine first:
        an engine's own options need it), when the case passes fio options of its own."""
        if not passed_options(params, PARAMS):
            return None
        return ("fio", "--parse-only", "--thread", "--name=disklab",
                *as_arguments(job_options(params, placed=bool(placement(params)))))

    def options_verdict(self, text: str, names: list[str]) -> list[tuple[str | None, str]]:
        return parse_only_problems(text, names)

    def options_list_argv(self) -> tuple[str, ...] | None:
        return ("fio", "--cmdhelp=all")

    def options_list(self, text: str) -> list[tuple[str, str]]:
        return option_list(text)

    def options_lookup_argvs(self, name: str,
                             params: Mapping[str, Any]) -> tuple[tuple[str, ...], ...]:
        """fio --cmdhelp=NAME (an alias shows its option), then fio --enghelp=ENGINE,NAME (the
        case's engine's own options, which --cmdhelp=all does not list)."""
        return (("fio", f"--cmdhelp={name}"),
                ("fio", f"--enghelp={_engine(params)},{name}"))

    def options_lookup(self, text: str) -> str | None:
        return canonical_name(text)

    def options_switch(self, text: str) -> bool:
        return is_switch(text)

    def version_argv(self) -> tuple[str, ...]:
        return ("fio", "--version")

    def reads(self, params: Mapping[str, Any]) -> bool:
        return str(params.get("rw")) not in ("write", "randwrite", "trim", "randtrim")

    def writes(self, params: Mapping[str, Any]) -> bool:
        return str(params.get("rw")) not in ("read", "randread")

    def space_bytes(self, params: Mapping[str, Any]) -> int | None:
        """Each job has a file of its own: size x numjobs."""
        size, jobs = param_value(params, "size"), param_value(params, "numjobs")
        return size * jobs if isinstance(size, int) and isinstance(jobs, int) else None

    def moved_bytes(self, params: Mapping[str, Any]) -> int | None:
        """io_size (else size) per job, times loops: what the case writes or reads."""
        return moved_bytes(params)

    def ios(self, params: Mapping[str, Any], test: str) -> int | None:
        """The bytes moved over bs; a mixed job's share of them by rwmixread."""
        moved, bs = moved_bytes(params), param_value(params, "bs")
        if moved is None or not isinstance(bs, int) or bs <= 0:
            return None
        count = moved // bs
        if str(params.get("rw")) in MIXED:
            share = int(param_value(params, "rwmixread"))
            count = count * (share if test == "read" else 100 - share) // 100
        return count

    def buffer_bytes(self, params: Mapping[str, Any]) -> int | None:
        """fio allocates a buffer of bs per I/O in flight, per job."""
        bs, depth, jobs = (param_value(params, k) for k in ("bs", "iodepth", "numjobs"))
        if all(isinstance(v, int) for v in (bs, depth, jobs)):
            return int(bs) * int(depth) * int(jobs)
        return None

    def check(self, params: Mapping[str, Any]) -> list[tuple[str, str]]:
        problems = []
        rw, bs = params.get("rw"), params.get("bs")
        if rw in ("trim", "randtrim"):
            problems.append(("rw", "fio trims block devices only: on a file in a directory it "
                                   "fails with 'Inappropriate ioctl for device' (err=25)"))
        if params.get("direct") and isinstance(bs, int) and bs % 512:
            problems.append(("bs", f"direct I/O needs a multiple of 512 bytes, not {bs}"))
        if placement(params) and files_per_job(params) > 1:
            problems.append(("nrfiles", "a placed case has one file per stream (its target's): "
                                        "no nrfiles"))
        return problems

    def advice(self, params: Mapping[str, Any]) -> list[tuple[str, str]]:
        """A queue depth above 1 that fio ignores: its synchronous engines issue one I/O at a
        time whatever iodepth says (fio's manual, iodepth), and Linux runs libaio's buffered
        I/O synchronously too (only direct = true is asynchronous)."""
        paced = self._paced(params)
        if paced:
            return paced
        depth, engine = param_value(params, "iodepth"), param_value(params, "ioengine")
        if not isinstance(depth, int) or depth <= 1:
            return []
        if engine in SYNC_ENGINES:
            return [("iodepth", "queue depth (iodepth) above 1 with the synchronous "
                                f"ioengine {engine}: fio ignores it and keeps one I/O in "
                                "flight per job; use libaio or io_uring with direct = true, "
                                "or numjobs for parallel I/O")]
        if engine == "libaio" and not param_value(params, "direct"):
            return [("iodepth", "queue depth (iodepth) above 1 with libaio and direct = "
                                "false: Linux runs buffered AIO synchronously, so fio keeps "
                                "about one I/O in flight; set direct = true")]
        return []

    def _paced(self, params: Mapping[str, Any]) -> list[tuple[str, str]]:
        """A size-based case fio paces (rate, rate_iops): how long it lasts whatever the
        device's speed (the plan's estimate counts it so, as a time-bound case)."""
        seconds, paced = self.paced_seconds(params), paced_rate(params, _bs(params))
        if not seconds or paced is None or seconds < 36:
            return []
        name, per_second = paced
        return [(f"{TABLE}.{name}", f"fio paces each job at {per_second / 2**20:.3g} MiB/s: "
                 f"this case lasts about {seconds / 3600:.2g} h whatever the device's speed "
                 "(the plan's estimate counts it so)")]

    def paced_seconds(self, params: Mapping[str, Any]) -> float | None:
        """A size-based case fio paces (rate, rate_iops): each job's bytes at its pace; None
        when it is time-based (its runtime says) or not paced."""
        if param_value(params, "runtime"):
            return None
        moved, jobs = moved_bytes(params), param_value(params, "numjobs")
        paced = paced_rate(params, _bs(params))
        if moved is None or paced is None or not isinstance(jobs, int) or jobs < 1:
            return None
        return moved / jobs / paced[1]

    def progress_bytes(self, params: Mapping[str, Any]) -> int | None:
        """The bytes fio moves: io_size (else size) per job, loops, number_ios; a time-based
        case's progress says its percentage of the size (fio's own ETA line)."""
        planned = moved_bytes(params)
        if planned is None:  # time-based: fio's percentage is of its time, shown on the size
            size, jobs = param_value(params, "size"), param_value(params, "numjobs")
            if isinstance(size, int) and isinstance(jobs, int):
                return size * jobs
        return planned

    def _placed_command(self, params: Mapping[str, Any], target: RunTarget) -> Command:
        """One job per name of `on`, its file on that target: the options before the first
        --name are fio's global section, each --name starts a job with its --directory and
        --filename. fio starts a group's jobs together; no group_reporting, so each job's
        figures come back (the per-target rows)."""
        rw = str(params["rw"])
        base = target.stem
        result = f"{target.directory}/{base}.json"
        common = ["fio", *as_arguments(job_options(params, placed=True))]
        jobs: list[str] = []
        data = []
        for i, (name, directory) in enumerate(stream_directories(params, target)):
            jobs += [f"--name={placed_job(i, name)}", f"--directory={directory}",
                     f"--filename={base}-{i}.fio"]
            data.append(f"{directory}/{base}-{i}.fio")
        output = ["--thread", "--output-format=json", f"--output={result}", "--eta=always"]
        prepare: tuple[tuple[str, ...], ...] = ()
        if rw in READS_FIRST:
            prepare = ((*common, "--thread", "--create_only=1", *jobs),)
        return Command(argv=(*common, *output, *jobs), cwd=target.directory,
                       files=(*data, result), result_file=result,
                       planned_bytes=moved_bytes(params, streams=len(data)),
                       prepare=prepare, reads_after_prepare=bool(prepare))

    def build_command(self, params: Mapping[str, Any], target: RunTarget) -> Command:
        if placement(params) and target.device is None:
            return self._placed_command(params, target)
        rw = str(params["rw"])
        base = target.stem
        data = data_files(target.directory, base, params)
        result = f"{target.directory}/{base}.json"
        where = ([f"--filename={target.device}"] if target.device else
                 [f"--directory={target.directory}",
                  f"--filename_format={file_name_format(base, params)}"])
        if target.device:
            data = ()  # a raw device: every job on it, nothing to remove afterwards
        options = job_options(params)
        job = ["fio", "--name=disklab", *where]
        output = ["--thread", "--output-format=json", f"--output={result}", "--eta=always"]
        prepare: tuple[tuple[str, ...], ...] = ()
        if rw in READS_FIRST and not target.device:
            layout = [(k, v) for k, v in options if k in LAYOUT_OPTIONS]
            prepare = ((*job, *as_arguments(layout), "--thread", "--create_only=1"),)
        return Command(
            argv=(*job, *as_arguments(options), *output), cwd=target.directory,
            files=(*data, result), result_file=result, planned_bytes=self.progress_bytes(params),
            prepare=prepare, reads_after_prepare=bool(prepare),
        )

    def _jobs(self, output: ToolOutput) -> tuple[list[Job], str, dict[str, float]]:
        """The jobs of the last complete JSON document (result file first, then stdout), else
        of the normal report on stdout. Returns them, the text they came from and the normal
        report's group throughput per direction (fio's total over the longest runtime)."""
        first_error: ParseError | None = None
        for text in (output.result_file, output.stdout):
            if not text or not text.strip():
                continue
            with_jobs, last, error = json_documents(text)
            if with_jobs is not None:
                return json_jobs(*with_jobs), text, {}
            if last is not None:
                line, doc = last
                raise ParseError(TOOL, line, "a 'jobs' list in fio's JSON document",
                                 ", ".join(list(doc)[:6]))
            first_error = first_error or error
            jobs, group_bw = text_jobs(text)
            if jobs:
                return jobs, text, {d: bw for d, (_line, bw) in group_bw.items()}
            if group_bw:
                first_line = min(line for line, _bw in group_bw.values())
                job = Job(name="all", group=0, line=first_line)
                job.dirs = {d: Direction(bw=bw) for d, (_line, bw) in group_bw.items()}
                return [job], text, {}
        messages = fio_messages(output.stdout, output.stderr, output.result_file)
        if messages and output.exit_status:
            raise ToolError("; ".join(messages[:3]))
        if first_error is not None:
            raise first_error
        raise ParseError(TOOL, None, "a fio JSON document ('{' ... \"jobs\") or fio's normal "
                         "report ('NAME: (groupid=N, jobs=N): err= 0: ...')")

    def _parse(self, output: ToolOutput, params: Mapping[str, Any], strict: bool) -> list[Metric]:
        jobs, text, group_bw = self._jobs(output)
        failed = [j for j in jobs if j.error]
        if failed and strict:
            job = failed[0]
            reason = job.error_text
            if not reason and job.error > 0:
                reason = os.strerror(job.error)
            messages = fio_messages(text, output.stdout, output.stderr)
            detail = f": {messages[0]}" if messages else ""
            raise ToolError(f"fio job {job.name} failed with error {job.error} ({reason}){detail}")
        for job in jobs:
            if not job.dirs and not job.error:
                raise ParseError(TOOL, job.line, f"I/O results of job {job.name} "
                                 "(a read, write or trim that moved data)")
        note = "job error" if failed else None
        return check_finite(jobs_metrics(jobs, importing=not params, note=note,
                                      group_bw=group_bw))

    def measured(self, lines: Sequence[tuple[float, str, str]], params: Mapping[str, Any]
                 ) -> list[Measured] | None:
        """Each job group's interval from fio's JSON report (fio/timing.py)."""
        return job_intervals(lines)

    def device_evidence(self, text: str) -> dict[str, float]:
        """fio's disk_util: the device's busy share and its requests in flight (output.py)."""
        return disk_util(text)

    def parse_result(self, output: ToolOutput, params: Mapping[str, Any]) -> list[Metric]:
        metrics = self._parse(output, params, strict=True)
        if placement(params):
            return self._placed(output, params, metrics)
        return metrics

    def _placed(self, output: ToolOutput, params: Mapping[str, Any],
                metrics: list[Metric]) -> list[Metric]:
        """A placed case: each direction's per-target and "all" rows from the jobs' own bytes
        and runtimes (the jobs of one group start together); fio's per-job rows carry their
        target, its other aggregate figures the target "all"."""
        names = placement(params)
        jobs, _text, _bw = self._jobs(output)
        if len(jobs) != len(names):
            raise ParseError(TOOL, None, f"{len(names)} jobs (one per target placed)",
                             str(len(jobs)))
        by_job = {placed_job(i, n): n for i, n in enumerate(names)}
        out: list[Metric] = []
        for d in DIRECTIONS:
            parts = [(n, j.dirs[d]) for n, j in zip(names, jobs, strict=True) if d in j.dirs]
            if not parts:
                continue
            # fio's report does not say when each job started (no per-job start time in its
            # JSON): start None, so no start skew is stored as if it had been measured (a 0
            # would be a claim; bench figure 9 measures fio's on the devices)
            streams = [StreamFigures(n, float(p.io_bytes or 0.0), None,
                                     (p.runtime_ms or 0.0) / 1e3) for n, p in parts]
            out += placement_metrics(d, streams, UNIT_THROUGHPUT)
        for m in metrics:
            if m.name.endswith(":bytes"):
                continue  # each target's and all streams' bytes are placement_metrics' own
            job = (m.params or {}).get("job")
            if job is not None:
                out.append(Metric(m.name, m.value, m.unit, m.note,
                                  {**(m.params or {}), "target": by_job.get(str(job), "?")}))
            elif m.name not in DIRECTIONS:
                out.append(Metric(m.name, m.value, m.unit, m.note,
                                  {**(m.params or {}), "target": "all"}))
        return out

    def parse_partial(self, output: ToolOutput, params: Mapping[str, Any]) -> list[Metric]:
        try:
            return self._parse(output, params, strict=False)
        except Exception:
            return []

    def progress_parser(self, params: Mapping[str, Any]) -> ProgressParser:
        return FioProgress(self.progress_bytes(params))

    def sniff(self, text: str) -> bool:
        return sniff(text)


def placed_job(index: int, target: str) -> str:
    """The fio job name of stream `index` of a placed case, on target `target`."""
    return f"s{index}-{target}"


ADAPTER = FioAdapter  # what the registry loads as tool 'fio'
