"""The stop table of warden_runtime.py, one test per row, driven through the
runtime's own functions: its Runtime, its SIGINT handler (real signals where
the row allows, the handler called with the exact frame where the row needs an
exact instant) and its reader thread. Run: python3 -m unittest discover -s runtime/tests
"""

import asyncio
import builtins
import json
import os
import signal
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import warden_runtime as wr  # noqa: E402


class Session:
    """A runtime on a fresh event loop in this process, with its messages on a pipe."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self.read_fd, self.write_fd = os.pipe()
        os.set_blocking(self.read_fd, False)
        self.rt = None
        self.buffer = b""

    def __enter__(self):
        # The scripts' output and the end markers go to a file, not the test report.
        self.saved = (os.dup(1), os.dup(2))
        self.output = tempfile.TemporaryFile()
        os.dup2(self.output.fileno(), 1)
        os.dup2(self.output.fileno(), 2)
        asyncio.set_event_loop(self.loop)
        self.rt = wr.Runtime(self.write_fd, self.loop, session_scope="test.session")
        self.previous_handler = signal.signal(signal.SIGINT, self.rt.on_sigint)
        return self

    def __exit__(self, *exc):
        signal.signal(signal.SIGINT, self.previous_handler)
        os.dup2(self.saved[0], 1)
        os.dup2(self.saved[1], 2)
        for fd in self.saved:
            os.close(fd)
        self.output.close()
        self.loop.close()
        asyncio.set_event_loop(None)
        os.close(self.read_fd)
        os.close(self.write_fd)

    def run(self, *scripts, ops=None, timeout=20):
        """Runs the scripts in order (each an exec op), then closes; returns the result messages by id."""
        for i, code in enumerate(scripts):
            self.rt.on_op({"op": "exec", "id": "s%d" % i, "code": code, "scope": "test.s%d" % i})
        for op in ops or []:
            self.rt.on_op(op)
        self.rt.on_op({"op": "close"})
        self.loop.run_until_complete(asyncio.wait_for(self.rt.serve(), timeout))
        messages = [json.loads(m["body"]) if m["type"] == "sealed" else m for m in self.messages()]
        return {m["id"]: m for m in messages if m["type"] == "result"}

    def messages(self):
        try:
            while True:
                chunk = os.read(self.read_fd, 1 << 16)
                if not chunk:
                    break
                self.buffer += chunk
        except BlockingIOError:
            pass
        lines = self.buffer.split(b"\n")
        assert lines[-1] == b"", "a protocol line was torn: %r" % lines[-1]
        return [json.loads(line) for line in lines[:-1]]


def sigint_after(seconds):
    """The host's SIGINT, sent from another thread after a delay."""
    pid = os.getpid()
    timer = threading.Timer(seconds, lambda: os.kill(pid, signal.SIGINT))
    timer.daemon = True
    timer.start()
    return timer


def repeating_sigint(every=0.2, until=5.0):
    """The host's repeated SIGINT (every 200 ms) until stopped."""
    stop = threading.Event()
    pid = os.getpid()

    def loop():
        end = time.monotonic() + until
        while not stop.wait(every) and time.monotonic() < end:
            os.kill(pid, signal.SIGINT)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()

    def finish():
        stop.set()
        thread.join()

    return finish


class StopTable(unittest.TestCase):
    def test_row_01_sigint_in_the_scripts_own_blocking_code(self):
        with Session() as s:
            sigint_after(0.3)
            results = s.run("x = 41\nimport time\ntime.sleep(10)\ny = 2")
            r = results["s0"]
            self.assertEqual(r["status"], "interrupted")
            self.assertEqual(r["line"], 3)
            self.assertIn('File "<script>", line 3', r["error"])
            self.assertNotIn("warden_runtime", r["error"])
            self.assertEqual(s.rt.globals["x"], 41)
            self.assertNotIn("y", s.rt.globals)

    def test_row_01_sigint_in_a_busy_loop(self):
        with Session() as s:
            sigint_after(0.3)
            r = s.run("n = 0\nwhile True:\n    n += 1")["s0"]
            self.assertEqual(r["status"], "interrupted")
            self.assertIn(r["line"], (2, 3))

    def test_row_01b_sigint_in_a_loop_callback_the_script_scheduled(self):
        with Session() as s:
            code = (
                "import asyncio, os, signal\n"
                "def callback():\n"
                "    os.kill(os.getpid(), signal.SIGINT)\n"
                "    global callback_done\n"
                "    callback_done = True\n"
                "asyncio.get_running_loop().call_soon(callback)\n"
                "await asyncio.sleep(10)\n"
            )
            results = s.run(code, "after = 1")
            self.assertTrue(s.rt.globals.get("callback_done"))
            self.assertEqual(results["s0"]["status"], "cancelled")
            self.assertEqual(results["s0"]["line"], 7)
            self.assertEqual(results["s1"]["status"], "ok")  # the loop survived

    def test_row_02_sigint_while_the_script_awaits(self):
        with Session() as s:
            sigint_after(0.3)
            r = s.run("import asyncio\nawait asyncio.sleep(10)\nafter = 1")["s0"]
            self.assertEqual(r["status"], "cancelled")
            self.assertEqual(r["line"], 2)
            self.assertNotIn("after", s.rt.globals)

    def test_row_03_sigint_during_a_protocol_write(self):
        with Session() as s:
            real_dumps = wr.json.dumps
            seen = {}

            class Json:
                @staticmethod
                def dumps(message):
                    if message.get("type") == "started" and not seen:
                        stop = s.rt.current
                        stop.armed = True  # even armed, a protocol write is never interrupted
                        try:
                            s.rt.on_sigint(signal.SIGINT, sys._getframe(1))
                            seen["raised"] = False
                        except KeyboardInterrupt:
                            seen["raised"] = True
                        stop.armed = False
                        seen["state"] = stop.state
                    return real_dumps(message)

            wr.json = Json
            try:
                results = s.run("import asyncio\nawait asyncio.sleep(10)")
            finally:
                wr.json = json
            self.assertFalse(seen["raised"])
            self.assertEqual(seen["state"], wr.REQUESTED)
            # The queued cancellation lands at the first await; every line parsed whole.
            self.assertEqual(results["s0"]["status"], "cancelled")

    def test_row_04_sigint_during_setup_then_blocking_code(self):
        with Session() as s:
            real_compile = builtins.compile

            def compile_with_sigint(*args, **kwargs):
                s.rt.on_sigint(signal.SIGINT, sys._getframe(1))
                return real_compile(*args, **kwargs)

            wr.compile = compile_with_sigint
            try:
                sigint_after(0.5)  # the host's repeat reaches the script's own code
                r = s.run("import time\ntime.sleep(10)")["s0"]
            finally:
                del wr.compile
            self.assertEqual(r["status"], "interrupted")
            self.assertEqual(r["line"], 2)

    def test_row_04_sigint_during_setup_then_an_await(self):
        with Session() as s:
            real_compile = builtins.compile

            def compile_with_sigint(*args, **kwargs):
                s.rt.on_sigint(signal.SIGINT, sys._getframe(1))
                return real_compile(*args, **kwargs)

            wr.compile = compile_with_sigint
            try:
                r = s.run("import asyncio\nfirst = 1\nawait asyncio.sleep(10)")["s0"]
            finally:
                del wr.compile
            self.assertEqual(r["status"], "cancelled")
            self.assertEqual(s.rt.globals["first"], 1)

    def test_row_05_cancel_op_before_the_first_step(self):
        with Session() as s:
            results = s.run("ran = True", ops=[{"op": "cancel", "id": "s0"}])
            self.assertEqual(results["s0"]["status"], "cancelled")
            self.assertNotIn("ran", s.rt.globals)

    def test_row_06_sigint_after_the_task_is_made_before_its_first_step(self):
        with Session() as s:
            real_task = asyncio.Task

            def task_then_sigint(coro, *args, **kwargs):
                task = real_task(coro, *args, **kwargs)
                s.rt.on_sigint(signal.SIGINT, sys._getframe(1))
                return task

            wr.asyncio.Task = task_then_sigint
            try:
                results = s.run("ran = True", "later = True")
            finally:
                wr.asyncio.Task = real_task
            self.assertEqual(results["s0"]["status"], "cancelled")
            self.assertNotIn("ran", s.rt.globals)
            # The next script (made while patched too) is stopped the same way: its own stop.
            self.assertEqual(results["s1"]["status"], "cancelled")

    def test_row_07_cancel_op_while_the_script_awaits(self):
        with Session() as s:
            s.loop.call_later(0.2, s.rt.on_op, {"op": "cancel", "id": "s0"})
            r = s.run("import asyncio\nawait asyncio.sleep(10)")["s0"]
            self.assertEqual(r["status"], "cancelled")

    def test_row_08_cancel_op_while_the_script_blocks(self):
        with Session() as s:
            loop = s.loop
            threading.Timer(0.1, lambda: loop.call_soon_threadsafe(s.rt.on_op, {"op": "cancel", "id": "s0"})).start()
            sigint_after(0.4)
            results = s.run("import time\ntime.sleep(10)", "import asyncio\nawait asyncio.sleep(0.3)\nnext_ok = True")
            self.assertEqual(results["s0"]["status"], "interrupted")
            # The cancel op ran after delivery and did nothing, to this script or the next.
            self.assertEqual(results["s1"]["status"], "ok")
            self.assertTrue(s.rt.globals["next_ok"])

    def test_row_09_repeats_after_delivery_do_not_cut_cleanup_short(self):
        with Session() as s:
            code = (
                "import asyncio, os, signal\n"
                "try:\n"
                "    await asyncio.sleep(10)\n"
                "except asyncio.CancelledError:\n"
                "    os.kill(os.getpid(), signal.SIGINT)\n"
                "    await asyncio.sleep(0.3)\n"
                "    os.kill(os.getpid(), signal.SIGINT)\n"
                "    cleaned = True\n"
                "    raise\n"
            )
            s.loop.call_later(0.2, s.rt.on_op, {"op": "cancel", "id": "s0"})
            s.loop.call_later(0.35, s.rt.on_op, {"op": "cancel", "id": "s0"})
            r = s.run(code)["s0"]
            self.assertEqual(r["status"], "cancelled")
            self.assertTrue(s.rt.globals.get("cleaned"))

    def test_row_09_blocking_cleanup_after_a_keyboard_interrupt(self):
        with Session() as s:
            repeats = repeating_sigint(0.2)
            code = (
                "import time\n"
                "try:\n"
                "    time.sleep(10)\n"
                "except KeyboardInterrupt:\n"
                "    time.sleep(1.0)\n"
                "    cleaned = True\n"
                "    raise\n"
            )
            try:
                r = s.run(code)["s0"]
            finally:
                repeats()
            self.assertEqual(r["status"], "interrupted")
            self.assertTrue(s.rt.globals.get("cleaned"))

    def test_row_10_sigint_or_cancel_after_the_script_finished(self):
        with Session() as s:
            real_end = s.rt.end_output
            seen = {}

            def end_with_stops(run_id, seal):
                try:
                    s.rt.on_sigint(signal.SIGINT, sys._getframe())
                    s.rt.on_cancel(run_id)
                    seen["raised"] = False
                except KeyboardInterrupt:
                    seen["raised"] = True
                real_end(run_id, seal)

            s.rt.end_output = end_with_stops
            results = s.run("done = True")
            self.assertFalse(seen["raised"])
            self.assertEqual(results["s0"]["status"], "ok")

    def test_row_11_sigint_between_scripts(self):
        with Session() as s:
            s.rt.on_op({"op": "exec", "id": "a", "code": "x = 41", "scope": "t.a"})
            s.rt.on_op({"op": "close"})
            s.loop.run_until_complete(s.rt.serve())
            os.kill(os.getpid(), signal.SIGINT)  # nothing is running: nothing happens
            s.rt.on_sigint(signal.SIGINT, sys._getframe())
            results = s.run("print(x + 1)\ny = x + 1")
            self.assertEqual(results["s0"]["status"], "ok")
            self.assertEqual(s.rt.globals["y"], 42)

    def test_row_12_a_stale_cancellation_does_not_touch_the_next_script(self):
        with Session() as s:
            stale = {}
            real_end = s.rt.end_output

            def keep_stop(run_id, seal):
                if run_id == "s0":
                    stale["stop"] = s.rt.current
                    # Queue the first script's delivery to run while the next one awaits.
                    s.loop.call_later(0.2, s.rt.deliver, stale["stop"])
                real_end(run_id, seal)

            s.rt.end_output = keep_stop
            results = s.run("first = 1", "import asyncio\nawait asyncio.sleep(0.5)\nsecond = 2")
            self.assertEqual(results["s1"]["status"], "ok")
            self.assertEqual(s.rt.globals["second"], 2)

    def test_row_13_a_task_factory_from_an_earlier_script(self):
        with Session() as s:
            factory_saw = []
            if sys.version_info >= (3, 12):
                install = "import asyncio\nasyncio.get_running_loop().set_task_factory(asyncio.eager_task_factory)"
            else:
                # Before 3.12 there is no eager_task_factory: a factory that records what it is given
                # shows the script task never goes through it.
                wr.__dict__["_factory_saw"] = factory_saw
                install = (
                    "import asyncio, warden_runtime\n"
                    "def factory(loop, coro, **kw):\n"
                    "    warden_runtime._factory_saw.append(getattr(coro, '__qualname__', coro))\n"
                    "    return asyncio.Task(coro, loop=loop, **kw)\n"
                    "asyncio.get_running_loop().set_task_factory(factory)"
                )
            sigint_after(0.6)
            results = s.run(install, "import time\ntime.sleep(10)")
            self.assertEqual(results["s0"]["status"], "ok")
            self.assertEqual(results["s1"]["status"], "interrupted")
            self.assertEqual(results["s1"]["line"], 2)
            self.assertFalse([name for name in factory_saw if "run_script" in str(name)])
            s.loop.set_task_factory(None)

    def test_row_14_a_script_replaced_the_sigint_handler(self):
        with Session() as s:
            sigint_after(0.5)
            results = s.run("import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)", "import time\ntime.sleep(10)")
            self.assertEqual(results["s1"]["status"], "interrupted")

    def test_row_15_the_reader_thread_blocks_sigint(self):
        with Session() as s:
            read_fd, write_fd = os.pipe()
            reader = threading.Thread(target=wr.read_ops, args=(s.loop, s.rt, read_fd), daemon=True)
            reader.start()
            time.sleep(0.1)
            with open("/proc/self/task/%d/status" % reader.native_id) as status:
                blocked = int(next(line for line in status if line.startswith("SigBlk:")).split()[1], 16)
            self.assertTrue(blocked & (1 << (signal.SIGINT - 1)), "SIGINT is not blocked in the reader thread")
            os.write(write_fd, b'{"op": "exec", "id": "r", "code": "z = 3", "scope": "t.r"}\n')
            os.close(write_fd)  # EOF: the runtime closes after the script
            s.loop.run_until_complete(asyncio.wait_for(s.rt.serve(), 10))
            self.assertEqual(s.rt.globals["z"], 3)


class Lines(unittest.TestCase):
    def test_results_report_the_scripts_line_and_no_runtime_frames(self):
        with Session() as s:
            results = s.run("def f():\n    return 1 / 0\nf()", "def g(:\n")
            self.assertEqual(results["s0"]["status"], "error")
            self.assertEqual(results["s0"]["line"], 2)
            self.assertNotIn(wr.RUNTIME_FILENAME, results["s0"]["error"])
            self.assertIn("ZeroDivisionError", results["s0"]["error"])
            self.assertEqual(results["s1"]["status"], "error")
            self.assertIn("SyntaxError", results["s1"]["error"])

    def test_system_exit_zero_is_ok_and_nonzero_an_error(self):
        with Session() as s:
            results = s.run("import sys\nsys.exit(0)", "import sys\nsys.exit(3)", "alive = True")
            self.assertEqual(results["s0"]["status"], "ok")
            self.assertEqual(results["s1"]["status"], "error")
            self.assertIn("SystemExit: 3", results["s1"]["error"])
            self.assertTrue(s.rt.globals["alive"])

    def test_the_scope_marker_is_the_scripts_while_it_runs(self):
        with Session() as s:
            s.run("import os\nseen = os.environ['WARDEN_SCOPE']")
            self.assertEqual(s.rt.globals["seen"], "test.s0")
            self.assertEqual(os.environ["WARDEN_SCOPE"], "test.session")


if __name__ == "__main__":
    unittest.main()
