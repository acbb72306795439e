"""One plan's figures on one target over weeks: the series a session belongs to
(series.py), each session's figures, the steps found in them (changes.py: Welch's test either
side of a point, corrected for every test) and what the records say changed at each step
(facts.py); build.py puts them together, document.py writes them out, schedule.py writes the
systemd user units that add a session every week."""
