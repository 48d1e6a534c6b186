"""What bench/'s scripts share: one module per job.

- cli: the script's name, messages and exits (die, warn, progress)
- procfs: /proc reads (CPU and switch counters of a process, BPF holders, load)
- ports: a free TCP port for an agent's /metrics
- metrics: a /metrics scrape and its Prometheus text
- agent: an agent or tracer process (start, ready, scrape, stop)
- tools: the programs the Makefile builds for bench/ (build/bench/, build/bench-floor)
- env: the machine and package versions a report's header gives
- fmt: Markdown cells and medians

A script imports it with its own directory on sys.path (bench/ is not a
package): `sys.path.insert(0, str(Path(__file__).resolve().parent))`.
Standard library only.
"""
