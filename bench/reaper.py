"""Builds process trees for the teardown benchmark and reaps what dies.

On some machines PID 1 never reaps orphans, so every process a benchmark kills
would stay a zombie for good. This helper makes itself a child subreaper
(prctl PR_SET_CHILD_SUBREAPER): orphans of the trees it builds are re-parented
to it, and it reaps them. It carries no WARDEN_SCOPE marker and is in its own
process group, so the teardown under test never touches it.

Protocol: one JSON request per line on stdin,
  {"scope": "host.run" | null, "group": N, "escapees": M}
and one JSON reply per line on stdout,
  {"pgid": P, "startTicks": T, "group": [pids], "escapees": [pids]}.
The tree: a bash (the "main process", new session and group) starts N
`sleep 300` in its group and M `setsid sleep 300` (their own sessions), prints
their pids and exits. It exits when stdin closes.
"""

import ctypes
import json
import os
import subprocess
import sys
import threading
import time

PR_SET_CHILD_SUBREAPER = 36

SCRIPT = r'''
for ((i = 0; i < $1; i++)); do sleep 300 </dev/null >/dev/null 2>&1 & echo "g $!"; done
for ((i = 0; i < $2; i++)); do setsid sleep 300 </dev/null >/dev/null 2>&1 & echo "e $!"; done
'''


def start_ticks(pid):
    with open(f'/proc/{pid}/stat', 'rb') as f:
        text = f.read().decode('latin-1')
    return int(text[text.rindex(')') + 2:].split(' ')[19])


def build(request):
    env = {k: v for k, v in os.environ.items() if k != 'WARDEN_SCOPE'}
    if request.get('scope'):
        env['WARDEN_SCOPE'] = request['scope']
    bash = subprocess.Popen(
        ['bash', '-c', SCRIPT, 'tree', str(int(request['group'])), str(int(request['escapees']))],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, env=env, start_new_session=True,
    )
    ticks = start_ticks(bash.pid)
    reply = {'pgid': bash.pid, 'startTicks': ticks, 'group': [], 'escapees': []}
    for line in bash.stdout:
        kind, pid = line.decode().split()
        reply['group' if kind == 'g' else 'escapees'].append(int(pid))
    return reply


def serve():
    for line in sys.stdin:
        if line.strip():
            print(json.dumps(build(json.loads(line))), flush=True)
    os._exit(0)


def main():
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        print(json.dumps({'error': 'prctl(PR_SET_CHILD_SUBREAPER) failed'}), flush=True)
    else:
        print(json.dumps({'ready': True}), flush=True)
    threading.Thread(target=serve, daemon=True).start()
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            time.sleep(0.005)


if __name__ == '__main__':
    main()
