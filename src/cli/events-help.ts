// `warden events --help`, apart from the command's code: the CLI's help table
// (src/cli/help.ts) loads it on every call, and events.ts (which reads /proc
// through the hook's agent finder) only when asked.

export const EVENTS_HELP = `Usage: warden events [--ended | --yielded] [--owner PID|agent] [--format line|json] [--output]

Prints the host's events as they happen, one line each, until stopped: a run
started, a signal of its stop sequence sent, its limit extended, and its end
(verdict, exit code or signal, elapsed against the limit, the command, and
its advice). For monitors and scripts: a Claude Code plugin's monitor runs
warden events --ended --yielded --owner agent, and each line reaches its model.

Options:
  --ended             only runs' ends
  --yielded           only the ends of runs an answer had left going (after a
                      yield): the ends an agent may not have seen
  --owner PID|agent   only the runs of process PID and of the processes under it
                      (agent: the agent this command runs under, the nearest
                      parent that is not a shell: its hook's runs and its
                      warden mcp's)
  --format line|json  a sentence per event (default), or each event as JSON
                      (an ended run's result without its output; outputChars
                      says how long it is)
  --output            with --format json: output events too

A host is started in the background when none runs, as for warden run.`;
