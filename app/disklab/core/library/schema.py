"""The library's tables and their migrations, versioned with PRAGMA user_version.

Version 1 was the first schema (sessions, cases, runs, metrics, samples, transcript). Version 2
adds the session's events (notices, config read-back), notes and tags, and stores samples as
(session, series id, t, value) with the series' names in their own table: a sample row without
two text columns and their index inserts at twice the rate, which a long run's thousands of
samples a second need with synchronous=FULL. A library made by an older DiskLab is migrated in
place when opened; one made by a newer DiskLab is refused. V1 is frozen: never edit it.

Version 3 adds each session's results summary (`result`: one row per case, metric and parameter
point with n, mean, stddev and the per-repeat values as little-endian doubles, NaN for a missing
one: what Library.results returns) and the stamp
it was computed at (`result_stamp`): the first look at a 10,000-run session reads 6,000 summary
rows instead of grouping 30,000 metric rows. The metric rows stay the record; the summary is
derived, written when a session's recorder closes, recomputed when its stamp no longer matches
the session (a resume, added runs) and computed on first read for sessions recorded before it.

Version 4 gives every session a UUID (`session.uuid`, 32 hex digits, unique): the id is only
this library's number, the UUID names the session wherever it travels, so importing a bundle or
merging a library twice keeps one session. Existing sessions get one derived from what they
are (store.session_uuid: their id, name, start, host and plan), so that an older library merged
twice (migrated on a copy each time) gives the same UUIDs; a trigger gives a random one to
every new row, whoever inserts it.

Version 5 keeps each session's verdicts of what limited its runs (`result_limits`: the verdicts
core.results.limits worked out from the session's samples, as JSON, with the stamp and the rules'
version they were worked out at), beside its results summary: a comparison of a 10,000-run
session read them instead of judging 10,000 runs again on every look. Derived like the summary:
stored when a session's run ends, worked out on first read for sessions without them (older
libraries, imports) and kept, worked out again when the stamp no longer matches.
"""

from __future__ import annotations

# What session.status says. Only 'finished' means every case x repeat has a complete result.
SESSION_STATUSES: dict[str, str] = {
    "running": "being recorded now (a dead writer's session becomes 'interrupted' on open)",
    "finished": "every case x repeat ran to a complete result",
    "failed": "it ended, and some runs failed (or a setup failed, or stop_on_failure stopped it)",
    "cancelled": "the user stopped it (Cancel, Ctrl-C, SIGTERM), wherever that came: during a "
                 "setup, between two configurations, in a case; what finished is kept",
    "interrupted": "its process died without ending it (SIGKILL, a crash, a power cut)",
    "imported": "a tool output someone already had, stored by `disklab import`",
}
# A session that is not complete can be resumed in place: `disklab resume` runs the case x
# repeat pairs whose run is not 'ok', and records a 'SessionResumed' row in the event table
# (when, how many runs, the status it had).
RESUMABLE = ("interrupted", "cancelled", "failed")

# What run.status says, per case x repeat. Only 'ok' runs are complete results: the others'
# figures (kept, each metric's note flagged 'partial') are evidence, not results.
RUN_STATUSES: dict[str, str] = {
    "running": "started; its end is not recorded yet",
    "ok": "ran to its end and its output gave every figure: a complete result",
    "partial": "ran to its end but its figures are incomplete (flagged 'partial')",
    "failed": "the tool failed, was stuck, or could not start; `error` says why",
    "cancelled": "stopped by the user's cancel; what it measured until then is flagged "
                 "'partial'",
    "interrupted": "its process died during it (the session is 'interrupted')",
    "imported": "a figure read from an imported tool output",
}

V1 = """
CREATE TABLE session (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    status TEXT NOT NULL,
    started REAL,
    finished REAL,
    pid INTEGER,
    pid_started REAL,
    last_activity REAL,
    host TEXT NOT NULL DEFAULT '{}',
    plan_text TEXT NOT NULL DEFAULT '',
    plan_path TEXT,
    warnings TEXT NOT NULL DEFAULT '[]',
    repeats INTEGER NOT NULL DEFAULT 1
);
CREATE TABLE case_ (
    session_id INTEGER NOT NULL REFERENCES session(id) ON DELETE CASCADE,
    case_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    config TEXT NOT NULL,
    tool TEXT NOT NULL,
    test_index INTEGER NOT NULL,
    params TEXT NOT NULL,
    PRIMARY KEY (session_id, case_id)
);
CREATE TABLE run (
    session_id INTEGER NOT NULL REFERENCES session(id) ON DELETE CASCADE,
    case_id TEXT NOT NULL,
    repeat INTEGER NOT NULL,
    argv TEXT NOT NULL,
    tool_version TEXT,
    planned_bytes INTEGER,
    started REAL,
    status TEXT NOT NULL,
    exit_status INTEGER,
    signal INTEGER,
    error TEXT,
    transcript_tail TEXT,
    duration REAL,
    PRIMARY KEY (session_id, case_id, repeat)
);
CREATE TABLE metric (
    id INTEGER PRIMARY KEY,
    session_id INTEGER NOT NULL REFERENCES session(id) ON DELETE CASCADE,
    case_id TEXT NOT NULL,
    repeat INTEGER NOT NULL,
    name TEXT NOT NULL,
    value REAL,
    unit TEXT NOT NULL,
    note TEXT,
    params TEXT
);
CREATE INDEX metric_session ON metric(session_id, case_id);
CREATE TABLE sample (
    session_id INTEGER NOT NULL,
    case_id TEXT NOT NULL,
    repeat INTEGER NOT NULL,
    t REAL NOT NULL,
    series TEXT NOT NULL,
    value REAL NOT NULL
);
CREATE INDEX sample_session ON sample(session_id, case_id, series);
CREATE TABLE transcript (
    session_id INTEGER NOT NULL,
    case_id TEXT NOT NULL,
    repeat INTEGER NOT NULL,
    t REAL NOT NULL,
    stream TEXT NOT NULL,
    text TEXT NOT NULL
);
CREATE INDEX transcript_session ON transcript(session_id, case_id, repeat);
"""

MIGRATIONS: dict[int, str] = {
    # 1 -> 2: the session's events, the user's notes and tags
    2: """
    CREATE TABLE event (
        id INTEGER PRIMARY KEY,
        session_id INTEGER NOT NULL REFERENCES session(id) ON DELETE CASCADE,
        t REAL NOT NULL,
        kind TEXT NOT NULL,
        case_id TEXT,
        data TEXT NOT NULL
    );
    CREATE INDEX event_session ON event(session_id);
    ALTER TABLE session ADD COLUMN notes TEXT NOT NULL DEFAULT '';
    CREATE TABLE tag (
        session_id INTEGER NOT NULL REFERENCES session(id) ON DELETE CASCADE,
        tag TEXT NOT NULL,
        PRIMARY KEY (session_id, tag)
    );
    CREATE TABLE series (
        id INTEGER PRIMARY KEY,
        session_id INTEGER NOT NULL,
        case_id TEXT NOT NULL,
        repeat INTEGER NOT NULL,
        name TEXT NOT NULL,
        UNIQUE (session_id, case_id, repeat, name)
    );
    INSERT INTO series (session_id, case_id, repeat, name)
        SELECT DISTINCT session_id, case_id, repeat, series FROM sample;
    CREATE TABLE sample_v2 (
        session_id INTEGER NOT NULL,
        series_id INTEGER NOT NULL,
        t REAL NOT NULL,
        value REAL NOT NULL
    );
    INSERT INTO sample_v2 (session_id, series_id, t, value)
        SELECT s.session_id, r.id, s.t, s.value FROM sample s JOIN series r
        ON r.session_id = s.session_id AND r.case_id = s.case_id AND r.repeat = s.repeat
        AND r.name = s.series ORDER BY s.rowid;
    DROP TABLE sample;
    ALTER TABLE sample_v2 RENAME TO sample;
    CREATE INDEX sample_session ON sample(session_id);
    """,
    # 2 -> 3: each session's results summary and the stamp it was computed at (derived from
    # the metric rows, which stay; an older library's sessions get theirs on first read)
    3: """
    CREATE TABLE result (
        session_id INTEGER NOT NULL REFERENCES session(id) ON DELETE CASCADE,
        ord INTEGER NOT NULL,
        case_id TEXT NOT NULL,
        metric TEXT NOT NULL,
        params TEXT NOT NULL,
        unit TEXT NOT NULL,
        n INTEGER NOT NULL,
        mean REAL,
        stddev REAL,
        vals BLOB NOT NULL,
        notes TEXT NOT NULL,
        PRIMARY KEY (session_id, ord)
    ) WITHOUT ROWID;
    CREATE TABLE result_stamp (
        session_id INTEGER PRIMARY KEY REFERENCES session(id) ON DELETE CASCADE,
        stamp TEXT NOT NULL
    );
    """,
    # 3 -> 4: a UUID per session (bundles and merged libraries import each session once)
    4: """
    ALTER TABLE session ADD COLUMN uuid TEXT;
    UPDATE session SET uuid = disklab_uuid(id, name, started, host, plan_text)
        WHERE uuid IS NULL;
    CREATE UNIQUE INDEX session_uuid ON session(uuid);
    CREATE TRIGGER session_uuid AFTER INSERT ON session WHEN NEW.uuid IS NULL BEGIN
        UPDATE session SET uuid = lower(hex(randomblob(16))) WHERE id = NEW.id;
    END;
    """,
    # 4 -> 5: each session's verdicts of what limited its runs, derived like the summary (an
    # older library's sessions get theirs on first read)
    5: """
    CREATE TABLE result_limits (
        session_id INTEGER PRIMARY KEY REFERENCES session(id) ON DELETE CASCADE,
        stamp TEXT NOT NULL,
        verdicts TEXT NOT NULL
    );
    """,
}

CURRENT = 1 + len(MIGRATIONS)
