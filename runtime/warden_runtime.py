"""Warden's Python session runtime: one interpreter, one script at a time, in
one persistent globals dict. Stdlib only; Python 3.9 and later.

The host talks to it on pipes of their own (fd 3 in, fd 4 out; see
PROTOCOL.md), never on the script's stdout. A script is stopped at its limit
by the host's cancel op and by SIGINT, exactly once, and keeps its output and
the interpreter's variables.

Where a SIGINT or a cancel op can land, and what happens (each row has a test
in tests/test_stop_table.py that drives it through this module's functions):

| #  | lands                                                      | what happens                                                      |
|----|------------------------------------------------------------|-------------------------------------------------------------------|
| 1  | SIGINT in the script's own code, running or blocking       | KeyboardInterrupt there; stop DELIVERED; status interrupted, line |
| 1b | SIGINT in a callback the script gave the event loop        | queued as in row 2: raising there would escape the event loop     |
| 2  | SIGINT while the script awaits (loop idle in select)       | cancellation queued (it wakes select); CancelledError at the await|
| 3  | SIGINT while the runtime writes a protocol message         | queued; the message stays whole; delivered at the next await, or  |
|    |                                                            | by the host's next SIGINT once the script's own code runs         |
| 4  | SIGINT during the runtime's setup of a script (compile)    | REQUESTED and queued; the next SIGINT in the script's code, or    |
|    |                                                            | its first await, delivers it                                      |
| 5  | cancel op before the script's first step                   | REQUESTED; delivered as the script starts: no code runs, cancelled|
| 6  | SIGINT after the script task is made, before its first step| as row 5                                                          |
| 7  | cancel op while the script awaits                          | the task is cancelled; CancelledError at the await                |
| 8  | cancel op while the script blocks in its own code          | the op waits for the loop; the host's SIGINT delivers (row 1); the|
|    |                                                            | op then finds the stop delivered and does nothing                 |
| 9  | SIGINT or cancel op after delivery (the script's except or | nothing: its cleanup, awaits included, runs to the end            |
|    | finally, awaits included)                                  |                                                                   |
| 10 | SIGINT or cancel op after the script finished              | nothing                                                           |
| 11 | SIGINT between scripts                                     | nothing                                                           |
| 12 | a queued cancellation of a finished script runs during the | nothing: it is bound to its own script's stop                     |
|    | next script                                                |                                                                   |
| 13 | an earlier script installed a task factory (eager)         | no effect: the script task is built with asyncio.Task directly,   |
|    |                                                            | and its stop state exists before its first step                   |
| 14 | an earlier script replaced the SIGINT handler              | no effect: the runtime installs its own at each script's start    |
| 15 | SIGINT aimed at the process while the reader thread reads  | the reader thread blocks SIGINT, so the main thread receives it   |
"""

import ast
import asyncio
import builtins
import faulthandler
import hashlib
import hmac
import json
import linecache
import os
import secrets
import signal
import sys
import threading
import time
import traceback

OPS_FD = 3
MESSAGES_FD = 4
SCRIPT_FILENAME = "<script>"
RUNTIME_FILENAME = os.path.abspath(__file__)
CO_COROUTINE = 0x80

PENDING = "pending"
REQUESTED = "requested"
DELIVERED = "delivered"


class ScriptStop:
    """One script's stop: PENDING -> REQUESTED -> DELIVERED, delivered at most once."""

    def __init__(self, run_id):
        self.run_id = run_id
        self.state = PENDING
        self.task = None
        self.started = False  # its first step ran
        self.armed = False  # its own code may now be interrupted
        self.finished = False  # its code is done: nothing may stop it any more


class Runtime:
    def __init__(self, messages_fd, loop, session_scope=None):
        self.messages_fd = messages_fd
        self.loop = loop
        self.nonce = secrets.token_hex(8)
        self.globals = {"__name__": "__main__", "__builtins__": builtins}
        self.current = None
        self.waiting = {}  # run id -> ScriptStop, for exec ops not started yet
        self.execs = asyncio.Queue()
        self.session_scope = session_scope if session_scope is not None else os.environ.get("WARDEN_SCOPE")
        self.closing = False

    # -- the protocol ---------------------------------------------------------

    def send(self, message):
        """Writes one whole message line. The SIGINT handler never raises in here."""
        data = (json.dumps(message) + "\n").encode("utf-8")
        view = memoryview(data)
        while view:
            written = os.write(self.messages_fd, view)
            view = view[written:]

    def on_op(self, op):
        """Runs on the event loop for each op the reader thread read."""
        if op is None or op.get("op") == "close":
            self.closing = True
            self.execs.put_nowait(None)
        elif op.get("op") == "exec":
            run_id = str(op.get("id"))
            # The key leaves the op at once: from here on only the sealer's closure holds it.
            op["seal"] = make_sealer(op.pop("key", None), run_id)
            self.waiting[run_id] = ScriptStop(run_id)
            self.execs.put_nowait(op)
        elif op.get("op") == "cancel":
            self.on_cancel(str(op.get("id")))
        else:
            self.send({"type": "log", "text": "unknown op: %r" % (op,)})

    def on_cancel(self, run_id):
        current = self.current
        if current is not None and current.run_id == run_id:
            self.deliver(current)
        elif run_id in self.waiting:
            stop = self.waiting[run_id]
            if stop.state == PENDING:
                stop.state = REQUESTED
        # Any other id: finished or unknown, nothing to stop.

    # -- stopping ---------------------------------------------------------------

    def on_sigint(self, signum, frame):
        stop = self.current
        if stop is None or stop.finished or stop.state == DELIVERED:
            return
        if stop.state == PENDING:
            stop.state = REQUESTED
        if stop.armed and script_code_on_stack(frame):
            stop.state = DELIVERED
            raise KeyboardInterrupt
        # Anywhere else (the loop idle, asyncio's own code, a protocol write):
        # deliver from the loop, between steps. This also wakes select().
        self.loop.call_soon_threadsafe(self.deliver, stop)

    def deliver(self, stop):
        """Delivers a requested stop as a cancellation, at most once, to its own script only."""
        if stop is not self.current or stop.finished or stop.state == DELIVERED:
            return
        if not stop.started:
            stop.state = REQUESTED  # delivered as it starts
            return
        stop.state = DELIVERED
        stop.task.cancel()

    # -- running scripts --------------------------------------------------------

    async def serve(self):
        self.send({"type": "ready", "pid": os.getpid(), "python": "%d.%d.%d" % sys.version_info[:3], "nonce": self.nonce})
        while True:
            op = await self.execs.get()
            if op is None:
                return
            await self.run(op)

    async def run(self, op):
        run_id = str(op.get("id"))
        seal = op.pop("seal", None) or make_sealer(None, run_id)
        stop = self.waiting.pop(run_id, None) or ScriptStop(run_id)
        self.current = stop
        scope = op.get("scope")
        if scope:
            os.environ["WARDEN_SCOPE"] = str(scope)
        signal.signal(signal.SIGINT, self.on_sigint)
        try:
            faulthandler.enable(file=sys.__stderr__)
        except Exception:
            pass
        # Built directly, not through loop.create_task, so a task factory an
        # earlier script installed cannot start it early (row 13).
        stop.task = asyncio.Task(self.run_script(stop, str(op.get("code", ""))))
        try:
            outcome = await stop.task
        except BaseException as error:  # the runtime's own failure: still report
            outcome = {"status": "error", "line": None, "error": "".join(traceback.format_exception_only(type(error), error))}
        finally:
            # When it ended on the machine's monotonic clock (the host's too): a host that could not
            # read this at once (stopped, starved) still records the real time it took.
            outcome_ended_ns = time.monotonic_ns()  # a script may replace this; the host trusts it only over a stall of its own
            stop.finished = True
            self.current = None
            if self.session_scope is not None:
                os.environ["WARDEN_SCOPE"] = self.session_scope
        self.end_output(run_id, seal)
        self.send(seal(dict({"type": "result", "id": run_id, "endedNs": str(outcome_ended_ns)}, **outcome)))

    async def run_script(self, stop, source):
        stop.started = True
        status, line, error = "ok", None, None
        try:
            try:
                if stop.state == REQUESTED:
                    # A stop that came before the first step (rows 5, 6).
                    stop.state = DELIVERED
                    raise asyncio.CancelledError()
                self.send({"type": "started", "id": stop.run_id})
                linecache.cache[SCRIPT_FILENAME] = (len(source), None, source.splitlines(True), SCRIPT_FILENAME)
                code = compile(source, SCRIPT_FILENAME, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
                stop.armed = True
                value = eval(code, self.globals)
                if code.co_flags & CO_COROUTINE:
                    await value
            finally:
                stop.finished = True
        except KeyboardInterrupt as interrupt:
            status, line, error = "interrupted", script_line(interrupt), self.report(interrupt)
        except asyncio.CancelledError as cancelled:
            status, line, error = "cancelled", script_line(cancelled), self.report(cancelled)
        except SystemExit as exit_:
            if exit_.code not in (None, 0):
                status, error = "error", self.report(exit_)
        except BaseException as failure:
            status, line, error = "error", script_line(failure), self.report(failure)
        return {"status": status, "line": line, "error": error}

    def report(self, error):
        """Writes the script's traceback (its own frames, none of the runtime's) to stderr."""
        text = format_script_error(error)
        try:
            sys.stderr.flush()
        except Exception:
            pass
        write_all(2, text.encode("utf-8", "replace"))
        return text

    def end_output(self, run_id, seal):
        """Marks the end of the script's output on fd 1 and fd 2 (PROTOCOL.md), with the tag only the sealer can make."""
        for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
            try:
                stream.flush()
            except Exception:
                pass
        marker = ("\x00warden-end:%s:%s:%s\x00\n" % (self.nonce, run_id, seal(None))).encode("ascii")
        for fd in (1, 2):
            try:
                write_all(fd, marker)
            except OSError as error:
                self.send({"type": "log", "text": "could not mark the end of output on fd %d: %s" % (fd, error)})


def make_sealer(key, run_id):
    """The one thing that can seal this script's result and end markers: the key
    given on its exec op lives only in this closure (never in the environment,
    a global or an attribute the script is handed), so a result the script
    writes to fd 4 itself, or a marker it prints, is not taken for the
    runtime's (PROTOCOL.md). seal(message) wraps a message; seal(None) is the
    markers' tag."""
    secret = (key or "").encode("utf-8")
    tag = hmac.new(secret, ("end:%s" % run_id).encode("utf-8"), hashlib.sha256).hexdigest()[:16]

    def seal(message):
        if message is None:
            return tag
        body = json.dumps(message)
        return {"type": "sealed", "id": run_id, "body": body, "mac": hmac.new(secret, body.encode("utf-8"), hashlib.sha256).hexdigest()}

    return seal


def write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def script_code_on_stack(frame):
    """True when the script's run (run_script's frame) is on the stack before any
    protocol write. Script code alone is not enough: a callback the script gave
    the event loop runs outside run_script, where a KeyboardInterrupt would
    escape the loop and end the interpreter."""
    send_code = Runtime.send.__code__
    run_code = Runtime.run_script.__code__
    while frame is not None:
        code = frame.f_code
        if code is send_code:
            return False
        if code is run_code:
            return True
        frame = frame.f_back
    return False


def is_runtime_file(filename):
    return filename == __file__ or os.path.abspath(filename) == RUNTIME_FILENAME


def script_frames(error):
    return [entry for entry in traceback.extract_tb(error.__traceback__) if not is_runtime_file(entry.filename)]


def script_line(error):
    lines = [entry.lineno for entry in traceback.extract_tb(error.__traceback__) if entry.filename == SCRIPT_FILENAME]
    if not lines and isinstance(error, SyntaxError) and error.filename == SCRIPT_FILENAME:
        return error.lineno
    return lines[-1] if lines else None


def format_script_error(error):
    if isinstance(error, SyntaxError):
        return "".join(traceback.format_exception_only(type(error), error))
    frames = script_frames(error)
    text = ""
    if frames:
        text = "Traceback (most recent call last):\n" + "".join(traceback.format_list(frames))
    if isinstance(error, KeyboardInterrupt):
        return text + "KeyboardInterrupt: the script was interrupted\n"
    if isinstance(error, asyncio.CancelledError):
        return text + "asyncio.CancelledError: the script was cancelled at an await\n"
    return text + "".join(traceback.format_exception_only(type(error), error))


def read_ops(loop, runtime, fd=OPS_FD):
    """The reader thread: SIGINT blocked, so the signal goes to the main thread (row 15)."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    with os.fdopen(fd, "rb", buffering=1 << 16) as ops:
        for raw in ops:
            try:
                op = json.loads(raw)
            except ValueError:
                loop.call_soon_threadsafe(runtime.send, {"type": "log", "text": "not a JSON op: %r" % raw[:200]})
                continue
            loop.call_soon_threadsafe(runtime.on_op, op)
    loop.call_soon_threadsafe(runtime.on_op, None)


def main():
    if not faulthandler.is_enabled():
        faulthandler.enable()
    for fd in (OPS_FD, MESSAGES_FD):
        try:
            os.fstat(fd)
        except OSError:
            sys.stderr.write("warden_runtime: fd %d is not open; start it as PROTOCOL.md says\n" % fd)
            sys.exit(2)

    async def serve():
        loop = asyncio.get_running_loop()
        runtime = Runtime(MESSAGES_FD, loop)
        # Installed before the first script, and not the default handler, so
        # asyncio leaves SIGINT to us rather than cancelling this coroutine.
        signal.signal(signal.SIGINT, runtime.on_sigint)
        threading.Thread(target=read_ops, args=(loop, runtime), name="warden-ops", daemon=True).start()
        await runtime.serve()

    signal.signal(signal.SIGINT, lambda signum, frame: None)
    asyncio.run(serve())
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    # Threads a script left running must not keep a closed session alive.
    os._exit(0)


if __name__ == "__main__":
    main()
