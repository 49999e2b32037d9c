// `warden COMMAND --help` and `warden COMMAND SUBCOMMAND --help`, from one
// table: a new command adds its row (its text here, or imported from beside
// its parser), and help.test.ts checks every row. Kept free of heavy imports:
// asking for help loads no engine, store or host.

import { RUN_HELP } from './args';
import { LIST_HELP, PRUNE_HELP, SHOW_HELP } from './history';
import { EXTEND_HELP, SESSIONS_HELP, STOP_HELP, WAIT_HELP } from './host-verbs';
import { PORTS_HELP, SEND_HELP } from './services';
// Each command's help text alone: setup's and the hook's code stay out of
// every call's startup (the bundle's metafile shows what help.ts pulls in).
import { SETUP_HELP } from './setup/help';
import { HOOK_HELP } from './hook/help';
import { K8S_HELP, K8S_JOB_HELP, K8S_SANDBOX_HELP, K8S_VERDICT_HELP } from './k8s/help';
import { SEARCH_HELP } from './search';
import { EVENTS_HELP } from './events-help';

export const SERVE_HELP = `Usage: warden serve [--port PORT] [--open] [--no-tcp] [--idle-exit DURATION]

Runs a Warden host for this state dir: the engine, the history, and the
control socket (<state dir>/run/warden.sock) that warden run, wait, stop and
agents use. Runs started through it appear live in the app and the web UI.

Options:
  --port PORT   also serve the API and the web UI on 127.0.0.1:PORT (default 7373; 0 picks a free port)
  --no-tcp      the unix socket only: no web UI, no TCP
  --open        print a login URL for the web UI with a one-time token (with a host
                already running: a fresh link to it)
  --idle-exit D exit after D with no live run and no client connected (the
                background host a warden command starts uses 10m, or WARDEN_HOST_IDLE)

TCP clients send Authorization: Bearer <token>, the token being in
<state dir>/run/token (readable by you alone). One host per state dir: a
second warden serve says so and exits. SIGINT or SIGTERM: live runs get the
stop sequence and are recorded, then the host exits (a second signal kills
them at once).`;

export const HISTORY_HELP = `Usage: warden history prune [--max-runs N] [--max-bytes SIZE]

Upkeep of the history (the SQLite file in the state dir).

Subcommands:
  prune   delete the oldest ended runs beyond the limits (see warden history prune --help)`;

export const REMOTE_HELP = `Usage: warden remote add NAME ssh://[USER@]HOST[:PORT] [--warden CMD]
       warden remote add NAME --k8s-pod NAMESPACE/POD[/CONTAINER] [--warden CMD]
       warden remote add NAME --command 'kubectl exec -i POD -- warden dial-stdio'
       warden remote list [--json]
       warden remote remove NAME

Other machines' Warden hosts, for warden --remote NAME COMMAND (or
WARDEN_REMOTE=NAME): run, wait, stop, extend, list, show, sessions and mcp
then act there, the runs living in that machine's host and history; warden
list --all-hosts lists every host's runs.

An ssh remote runs \`CMD dial-stdio\` there (CMD: how to run warden on that
machine, default warden; the remote's shell reads it) with the system ssh, so
your ssh config, keys and agent apply; WARDEN_SSH names another ssh program.
One ssh session per remote is shared by all commands (ControlMaster, kept
10m after the last) and opened again when it dropped. --k8s-pod runs
\`kubectl exec -i -n NAMESPACE POD [-c CONTAINER] -- CMD dial-stdio\` (kubectl
from PATH, its config and context; CMD default warden, split at spaces).
--command runs any program (split into words, no shell) whose stdin and
stdout reach \`warden dial-stdio\` on a machine with Warden.

Names are 1 to 32 letters, digits, '_', '.' or '-'. Kept in
<state dir>/remotes.json, readable by you alone.`;

export const APP_HELP = `Usage: warden app [--web] [--port PORT]

Opens the Warden desktop app, where one is installed: WARDEN_APP (a path to
the app), the package this warden came in, /opt/Warden/warden-app (the .deb),
warden-app on PATH, a Warden AppImage in ~/Applications or ~/.local/bin, or an
Electron beside this warden (a checkout after npm start). It starts on its
own and warden app returns. Where there is none, or no display, one line says
so and the web UI opens instead: warden serve --open, which prints a login
link for a browser (--port as warden serve's).

Options:
  --web         the web UI even where the app is installed
  --port PORT   with the web UI: serve it on 127.0.0.1:PORT (default 7373)`;


export const DIAL_STDIO_HELP = `Usage: warden dial-stdio

Connects stdin and stdout to this state dir's Warden host (starting one in the
background when none runs) and carries its API, for a client on another
machine: warden remote add NAME ssh://HOST runs it there over ssh. Not for
typing at: it speaks HTTP.`;

/** Help by command, and by "command subcommand". */
export const COMMAND_HELP: Readonly<Record<string, string>> = {
  run: RUN_HELP,
  wait: WAIT_HELP,
  stop: STOP_HELP,
  extend: EXTEND_HELP,
  ports: PORTS_HELP,
  send: SEND_HELP,
  list: LIST_HELP,
  show: SHOW_HELP,
  search: SEARCH_HELP,
  events: EVENTS_HELP,
  sessions: SESSIONS_HELP,
  serve: SERVE_HELP,
  history: HISTORY_HELP,
  'history prune': PRUNE_HELP,
  setup: SETUP_HELP,
  hook: HOOK_HELP,
  remote: REMOTE_HELP,
  'dial-stdio': DIAL_STDIO_HELP,
  app: APP_HELP,
  k8s: K8S_HELP,
  'k8s job': K8S_JOB_HELP,
  'k8s sandbox': K8S_SANDBOX_HELP,
  'k8s verdict': K8S_VERDICT_HELP,
};

const isHelpFlag = (arg: string) => arg === '--help' || arg === '-h';

/**
 * The text `warden ARGS` asks for, or undefined when it asks for none. For
 * `run` only its first word counts (the rest may be the command's own
 * --help); for the others --help anywhere before a `--`.
 */
export function helpFor(args: readonly string[]): string | undefined {
  const [command, ...rest] = args;
  if (command === undefined || !Object.hasOwn(COMMAND_HELP, command)) return undefined;
  const end = rest.indexOf('--');
  const words = command === 'run' ? rest.slice(0, 1) : end === -1 ? rest : rest.slice(0, end);
  if (!words.some(isHelpFlag)) return undefined;
  const sub = rest[0] !== undefined ? `${command} ${rest[0]}` : '';
  return Object.hasOwn(COMMAND_HELP, sub) ? COMMAND_HELP[sub] : COMMAND_HELP[command];
}
