"""Bad input at the binding's edges: wrong types, out-of-range clocks, and closing a verifier that
other threads are using. Each answer is an exception with a readable message, never a crash."""
import base64
import copy
import pickle
import subprocess
import sys
import textwrap

import pytest

import iapverify
from iapverify import IAPVerifyError, InvalidArgumentError

RECEIPT = "receipts/production_2025-04-18_com.dashedspace.analytics_sha256.der"
NOW = 1745000000000
NOT_BYTES = [12345, 0, None, 1.5, [1, 2], (b"x",), {"a": 1}, object()]


@pytest.fixture
def verifier():
    with iapverify.Verifier({"bundle_id": "*"}) as v:
        yield v


@pytest.fixture(scope="module")
def der(fixtures):
    return (fixtures / RECEIPT).read_bytes()


# Receipts and tokens: bytes-like or text, nothing else.

@pytest.mark.parametrize("value", NOT_BYTES, ids=repr)
def test_a_receipt_that_is_not_bytes_is_a_type_error(verifier, value):
    with pytest.raises(TypeError, match=r"receipt must be bytes, bytearray, memoryview or str, not"):
        verifier.verify_receipt(value, now_ms=0)


@pytest.mark.parametrize("value", NOT_BYTES, ids=repr)
def test_a_token_that_is_not_bytes_is_a_type_error(verifier, value):
    with pytest.raises(TypeError, match=r"token must be bytes, bytearray, memoryview or str, not"):
        verifier.verify_jws(value, now_ms=0)


def test_every_bytes_like_receipt_gives_the_same_answer(der):
    with iapverify.Verifier({"bundle_id": "com.dashedspace.analytics"}) as v:
        answers = {v.verify_receipt(form, now_ms=NOW).json
                   for form in (der, bytearray(der), memoryview(der), base64.b64encode(der),
                                base64.b64encode(der).decode(), memoryview(bytearray(der))[0:len(der)])}
    assert len(answers) == 1
    assert '"verdict":"valid"' in answers.pop().replace(" ", "")


# JSON inputs: a mapping or JSON text.

@pytest.mark.parametrize("value", [12345, None, 1.5, [1, 2], object()], ids=repr)
def test_json_inputs_of_the_wrong_type_are_type_errors(verifier, value):
    with pytest.raises(TypeError, match=r"body must be a mapping or JSON text"):
        verifier.interpret_response(value, now_ms=0)
    with pytest.raises(TypeError, match=r"transactions must be a mapping or JSON text"):
        verifier.compute_entitlements(value, now_ms=0)
    with pytest.raises(TypeError, match=r"config must be a mapping or JSON text"):
        iapverify.Verifier(value)


@pytest.mark.parametrize("value", [12345, 1.5, [1, 2], object()], ids=repr)
def test_options_of_the_wrong_type_are_type_errors(verifier, value):
    for call in (lambda: verifier.verify_receipt(b"x", now_ms=0, options=value),
                 lambda: verifier.verify_jws(b"x", now_ms=0, options=value),
                 lambda: verifier.compute_entitlements({"transactions": []}, now_ms=0, options=value),
                 lambda: verifier.interpret_response({"status": 0}, now_ms=0, options=value)):
        with pytest.raises(TypeError, match=r"options must be a mapping or JSON text"):
            call()


def test_json_inputs_as_text_bytes_or_mapping(verifier):
    answers = {verifier.compute_entitlements(form, now_ms=0).json
               for form in ('{"transactions": []}', b'{"transactions": []}', bytearray(b'{"transactions": []}'),
                            memoryview(b'{"transactions": []}'), {"transactions": []})}
    assert len(answers) == 1


def test_values_json_cannot_carry_are_refused_before_the_call(verifier):
    with pytest.raises(TypeError, match="not JSON serializable"):
        verifier.compute_entitlements({"transactions": [{1, 2}]}, now_ms=0)
    with pytest.raises(ValueError, match="JSON"):
        verifier.compute_entitlements({"transactions": [float("nan")]}, now_ms=0)


def test_interpret_response_checks_environment_attempt_and_options(verifier):
    with pytest.raises(TypeError, match="environment must be a str, not int"):
        verifier.interpret_response({"status": 0}, environment=1, now_ms=0)
    with pytest.raises(TypeError, match="endpoint must be a str, not int"):
        verifier.interpret_response({"status": 0}, endpoint=1, now_ms=0)
    with pytest.raises(TypeError, match="attempt must be an int, not str"):
        verifier.interpret_response({"status": 0}, attempt="2", now_ms=0)
    with pytest.raises(InvalidArgumentError, match="attempt must fit in a signed 64-bit integer"):
        verifier.interpret_response({"status": 0}, attempt=2 ** 64, now_ms=0)
    with pytest.raises(InvalidArgumentError, match="attempt"):
        verifier.interpret_response({"status": 0}, attempt=0, now_ms=0)        # the library's own rule
    with pytest.raises(InvalidArgumentError, match="options are not valid JSON"):
        verifier.interpret_response({"status": 0}, options="{not json", now_ms=0)
    with pytest.raises(TypeError, match="options must be a JSON object, not list"):
        verifier.interpret_response({"status": 0}, options="[1]", now_ms=0)
    # Options given as JSON text are merged with environment and attempt like a mapping is.
    r = verifier.interpret_response({"status": 21005}, options='{"attempt": 2}', now_ms=0)
    assert (r.action, r.retry_after_ms) == ("retry_later", 2000)


# now_ms: an int that fits int64_t; negative values go to the library, which refuses them.

@pytest.mark.parametrize("value", [2 ** 63, 2 ** 64, 2 ** 64 + 5, -(2 ** 63) - 1, 10 ** 30], ids=str)
def test_now_ms_outside_int64_raises_instead_of_wrapping(verifier, value):
    for call in (lambda: verifier.verify_receipt(b"x", now_ms=value),
                 lambda: verifier.verify_jws(b"x", now_ms=value),
                 lambda: verifier.compute_entitlements({"transactions": []}, now_ms=value),
                 lambda: verifier.interpret_response({"status": 0}, now_ms=value)):
        with pytest.raises(InvalidArgumentError, match=f"now_ms must fit in a signed 64-bit integer, got {value}") as e:
            call()
        assert isinstance(e.value, ValueError) and isinstance(e.value, IAPVerifyError)


@pytest.mark.parametrize("value", [1.5, 1e12, "1745000000000", b"1", True, False, [1]], ids=repr)
def test_now_ms_that_is_not_an_int_is_a_type_error(verifier, value):
    with pytest.raises(TypeError, match="now_ms must be an int, not"):
        verifier.verify_receipt(b"x", now_ms=value)


def test_now_ms_edges_inside_int64(verifier, der):
    class Millis:                      # anything with __index__ is an int, e.g. numpy.int64
        def __index__(self):
            return NOW

    assert verifier.verify_receipt(b"x", now_ms=2 ** 63 - 1).verdict == "malformed"
    assert verifier.verify_receipt(der, now_ms=Millis()).json == verifier.verify_receipt(der, now_ms=NOW).json
    for negative in (-1, -(2 ** 63)):  # the library's answer, as in every binding
        with pytest.raises(InvalidArgumentError, match="now_ms"):
            verifier.verify_receipt(b"x", now_ms=negative)


# A verifier owns a C handle: no copies, and no use after close.

def test_a_verifier_cannot_be_copied_or_pickled(verifier):
    for attempt in (copy.copy, copy.deepcopy, pickle.dumps):
        with pytest.raises(TypeError, match="cannot be copied or pickled"):
            attempt(verifier)


def test_every_call_after_close_raises(der):
    v = iapverify.Verifier({"bundle_id": "*"})
    assert not v.closed
    v.close()
    v.close()                          # idempotent
    assert v.closed
    for call in (lambda: v.verify_receipt(der, now_ms=NOW),
                 lambda: v.verify_jws(b"a.b.c", now_ms=NOW),
                 lambda: v.compute_entitlements({"transactions": []}, now_ms=NOW),
                 lambda: v.interpret_response({"status": 0}, now_ms=NOW)):
        with pytest.raises(InvalidArgumentError, match="the verifier is closed"):
            call()
    with iapverify.Verifier({"bundle_id": "*"}) as w:
        pass
    with pytest.raises(InvalidArgumentError, match="the verifier is closed"):
        w.verify_receipt(der, now_ms=NOW)


def test_a_verifier_that_failed_to_build_closes_quietly():
    with pytest.raises(IAPVerifyError):
        iapverify.Verifier({"colour": "red"})
    v = iapverify.Verifier.__new__(iapverify.Verifier)   # __init__ never ran
    v.close()


# Closing while another thread is inside a call. Each race runs in a subprocess, so that a crash
# (the old behaviour was a segfault) fails the test with its exit code instead of killing pytest.

def run_python(code, *args):
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *map(str, args)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc.stdout


CLOSE_DURING_CALL = """
    import sys, threading
    import iapverify
    from iapverify import InvalidArgumentError

    der, how = open(sys.argv[1], "rb").read(), sys.argv[2]
    real = iapverify._library()
    in_call = threading.Event()          # the worker holds the verifier, just before the C call
    close_waiting = threading.Event()    # close() has begun and is waiting for the worker
    events = []

    class Gate:
        # The real library, except that the receipt call pauses in the middle of the race: after
        # the binding has taken the verifier for the call, before the C function runs.
        def __getattr__(self, name):
            return getattr(real, name)

        def iapv_verify_receipt(self, *args):
            in_call.set()
            close_waiting.wait()
            status = real.iapv_verify_receipt(*args)
            events.append("C call returned")
            return status

    class WatchedCondition(threading.Condition):
        def wait(self, timeout=None):
            close_waiting.set()              # called by close() only while a call is running
            return super().wait(timeout)

    iapverify._lib = Gate()
    v = iapverify.Verifier({"bundle_id": "com.dashedspace.analytics"})
    v._cond = WatchedCondition()
    results = []
    worker = threading.Thread(target=lambda: results.append(v.verify_receipt(der, now_ms=1745000000000)))
    worker.start()
    in_call.wait()

    def close():
        if how == "with":
            with v:
                pass
        else:
            v.close()
        events.append("closed")
        close_waiting.set()              # only matters if close() returned without waiting: no hang

    closer = threading.Thread(target=close)
    closer.start()
    close_waiting.wait()
    # close() has begun: a call that starts now is refused, even before the handle is freed.
    late = []
    def late_call():
        try:
            v.verify_receipt(der, now_ms=1745000000000)
        except InvalidArgumentError as e:
            late.append(str(e))
    t = threading.Thread(target=late_call)
    t.start()
    t.join()
    worker.join()
    closer.join()
    assert late == ["IAPV_E_INVALID_ARGUMENT: the verifier is closed"], late
    assert events == ["C call returned", "closed"], events
    assert [r.verdict for r in results] == ["valid"], results
    try:
        v.verify_receipt(der, now_ms=1745000000000)
        raise SystemExit("a call after close answered")
    except InvalidArgumentError as e:
        assert "closed" in str(e)
    print("ok")
"""


@pytest.mark.parametrize("how", ["close", "with"])
def test_close_waits_for_a_call_in_progress(fixtures, how):
    assert run_python(CLOSE_DURING_CALL, fixtures / RECEIPT, how).strip() == "ok"


CLOSE_UNDER_LOAD = """
    import sys, threading
    import iapverify
    from iapverify import InvalidArgumentError

    der = open(sys.argv[1], "rb").read()
    threads, rounds = 8, 20
    for _ in range(rounds):
        v = iapverify.Verifier({"bundle_id": "com.dashedspace.analytics"})
        started = threading.Barrier(threads + 1)   # every worker has answered once before close()
        outcomes = []

        def work():
            answered = 0
            while True:
                try:
                    r = v.verify_receipt(der, now_ms=1745000000000)
                except InvalidArgumentError as e:
                    outcomes.append(str(e))
                    return
                outcomes.append(r.verdict)
                answered += 1
                if answered == 1:
                    started.wait()

        pool = [threading.Thread(target=work) for _ in range(threads)]
        for t in pool:
            t.start()
        started.wait()
        v.close()
        for t in pool:
            t.join()
        assert set(outcomes) == {"valid", "IAPV_E_INVALID_ARGUMENT: the verifier is closed"}, set(outcomes)
        assert outcomes.count("IAPV_E_INVALID_ARGUMENT: the verifier is closed") == threads
    print("ok")
"""


def test_closing_under_load_never_crashes(fixtures):
    # The interleavings vary from run to run; the outcome does not: every call either answers or
    # raises "closed", each worker stops on its first "closed", and the interpreter survives.
    assert run_python(CLOSE_UNDER_LOAD, fixtures / RECEIPT).strip() == "ok"
