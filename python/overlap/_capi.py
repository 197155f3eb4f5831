"""ctypes bindings of libOverlapCAPI.so (include/overlap-c and the MLIR core
C API it exports), and the Context / Module classes over them.

Handles (MlirContext, MlirModule, ...) are `struct { void *ptr; }` and
MlirStringRef is `struct { const char *data; size_t length; }`; both are
declared as ctypes Structures for calls. Callbacks *from* C take their
arguments as plain words (a one-pointer struct is passed like a pointer, a
two-word MlirStringRef like two words, and MlirLogicalResult, a one-byte
struct, is returned like an int8), which is what the x86-64 and AArch64
calling conventions do and avoids ctypes' struct-by-value callbacks.
"""

import ctypes
import json
import numbers
import os
import threading
import weakref

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


class Error(Exception):
    """A failure of overlap: parse or verify errors, a failed pass pipeline,
    a program the simulator or the runtime rejects. The message is the text
    of the diagnostics (or of the tool's error output)."""


def _handle(name):
    return type(name, (ctypes.Structure,), {"_fields_": [("ptr", ctypes.c_void_p)]})


MlirContext = _handle("MlirContext")
MlirModule = _handle("MlirModule")
MlirOperation = _handle("MlirOperation")
MlirDialectRegistry = _handle("MlirDialectRegistry")
MlirDiagnostic = _handle("MlirDiagnostic")
MlirLocation = _handle("MlirLocation")


class MlirStringRef(ctypes.Structure):
    _fields_ = [("data", ctypes.c_char_p), ("length", ctypes.c_size_t)]


class MlirLogicalResult(ctypes.Structure):
    _fields_ = [("value", ctypes.c_int8)]


# void (*)(MlirStringRef, void *), MlirStringRef passed as its two words.
STRING_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_size_t,
                                   ctypes.c_void_p)
# MlirLogicalResult (*)(MlirDiagnostic, void *).
DIAGNOSTIC_HANDLER = ctypes.CFUNCTYPE(ctypes.c_int8, ctypes.c_void_p,
                                      ctypes.c_void_p)

_SEVERITY = {0: "error", 1: "warning", 2: "note", 3: "remark"}


def library_path():
    """$OVERLAP_CAPI_LIB, else build/lib/libOverlapCAPI.so of this repo."""
    path = os.environ.get("OVERLAP_CAPI_LIB")
    if path:
        return path
    return os.path.join(REPO_ROOT, "build", "lib", "libOverlapCAPI.so")


_lib = None
_lib_lock = threading.Lock()


def _declare(lib):
    S, V = MlirStringRef, ctypes.c_void_p
    decls = {
        "mlirDialectRegistryCreate": ([], MlirDialectRegistry),
        "mlirDialectRegistryDestroy": ([MlirDialectRegistry], None),
        "overlapRegisterAllDialects": ([MlirDialectRegistry], None),
        "overlapRegisterAllPasses": ([], None),
        "mlirContextCreateWithRegistry": ([MlirDialectRegistry, ctypes.c_bool],
                                          MlirContext),
        "mlirContextDestroy": ([MlirContext], None),
        "mlirContextAttachDiagnosticHandler": (
            [MlirContext, DIAGNOSTIC_HANDLER, V, V], ctypes.c_uint64),
        "mlirContextDetachDiagnosticHandler": ([MlirContext, ctypes.c_uint64],
                                               None),
        "mlirDiagnosticPrint": ([MlirDiagnostic, STRING_CALLBACK, V], None),
        "mlirDiagnosticGetLocation": ([MlirDiagnostic], MlirLocation),
        "mlirDiagnosticGetSeverity": ([MlirDiagnostic], ctypes.c_int),
        "mlirDiagnosticGetNumNotes": ([MlirDiagnostic], ctypes.c_ssize_t),
        "mlirDiagnosticGetNote": ([MlirDiagnostic, ctypes.c_ssize_t],
                                  MlirDiagnostic),
        "mlirLocationPrint": ([MlirLocation, STRING_CALLBACK, V], None),
        "overlapModuleCreateParse": ([MlirContext, S], MlirModule),
        "mlirModuleDestroy": ([MlirModule], None),
        "mlirModuleGetOperation": ([MlirModule], MlirOperation),
        "mlirOperationPrint": ([MlirOperation, STRING_CALLBACK, V], None),
        "overlapRunOverlapPipeline": ([MlirModule, S], MlirLogicalResult),
        "overlapRunPassPipeline": ([MlirModule, S], MlirLogicalResult),
        "overlapSimulate": ([MlirModule, S, S, S, ctypes.c_ssize_t,
                             ctypes.POINTER(ctypes.c_int64), ctypes.c_uint,
                             STRING_CALLBACK, V], MlirLogicalResult),
    }
    for name, (args, res) in decls.items():
        fn = getattr(lib, name)
        fn.argtypes = args
        fn.restype = res


def lib():
    """The loaded libOverlapCAPI.so (loaded once, passes registered)."""
    global _lib
    with _lib_lock:
        if _lib is None:
            path = library_path()
            if not os.path.exists(path):
                raise Error("libOverlapCAPI.so not found at %s: build the "
                            "project (ninja -C build OverlapCAPI) or set "
                            "OVERLAP_CAPI_LIB" % path)
            loaded = ctypes.CDLL(path)
            _declare(loaded)
            loaded.overlapRegisterAllPasses()
            _lib = loaded
    return _lib


def _ref(text):
    data = text.encode() if isinstance(text, str) else bytes(text)
    return MlirStringRef(data, len(data))


class _Collector:
    """A string callback that appends the pieces to a list."""

    def __init__(self):
        self.pieces = []
        self.callback = STRING_CALLBACK(self._append)

    def _append(self, data, length, _user):
        self.pieces.append(ctypes.string_at(data, length) if length else b"")

    def text(self):
        return b"".join(self.pieces).decode(errors="replace")


def _format_diagnostic(l, diag, indent=""):
    loc = _Collector()
    l.mlirLocationPrint(l.mlirDiagnosticGetLocation(diag), loc.callback, None)
    msg = _Collector()
    l.mlirDiagnosticPrint(diag, msg.callback, None)
    severity = _SEVERITY.get(l.mlirDiagnosticGetSeverity(diag), "error")
    text = msg.text()
    if indent and text.startswith("see current operation"):
        text = "see current operation"  # the whole op dump: too long
    lines = ["%s%s: %s: %s" % (indent, loc.text(), severity, text)]
    for i in range(l.mlirDiagnosticGetNumNotes(diag)):
        lines.append(_format_diagnostic(l, l.mlirDiagnosticGetNote(diag, i),
                                        indent + "  "))
    return "\n".join(lines)


class Context:
    """An MLIR context with overlap's dialects, collecting its diagnostics.

    Every failing call raises `Error` with the diagnostics emitted during
    that call; warnings and remarks of successful calls are kept in
    `self.diagnostics` (cleared at the start of each call)."""

    def __init__(self):
        # Every call into the context holds it, and so does close(): a
        # close waits for the calls in flight, and the calls after it
        # raise Error. Reentrant: a module collected while its thread holds
        # the lock releases itself under it.
        self._lock = threading.RLock()
        l = lib()
        self._lib = l
        registry = l.mlirDialectRegistryCreate()
        l.overlapRegisterAllDialects(registry)
        self._ctx = l.mlirContextCreateWithRegistry(registry, False)
        l.mlirDialectRegistryDestroy(registry)
        self.diagnostics = []
        self._handler = DIAGNOSTIC_HANDLER(self._on_diagnostic)
        self._handler_id = l.mlirContextAttachDiagnosticHandler(
            self._ctx, self._handler, None, None)
        # Modules die with their context: close() destroys them first and
        # they refuse to be used afterwards (instead of reading freed IR).
        self._modules = weakref.WeakSet()

    def _on_diagnostic(self, diag_ptr, _user):
        try:
            self.diagnostics.append(
                _format_diagnostic(self._lib, MlirDiagnostic(diag_ptr)))
        except Exception as e:  # never let an exception cross into C
            self.diagnostics.append("<diagnostic: %s>" % e)
        return 1  # handled: not printed on stderr

    def _fail(self, what):
        detail = "\n".join(self.diagnostics) or "(no diagnostic)"
        raise Error("%s failed:\n%s" % (what, detail))

    def close(self):
        """Destroys the context and every module still parsed in it, once
        the calls in flight in other threads are over; using the context or
        one of its modules afterwards raises `Error`."""
        lock = getattr(self, "_lock", None)
        if lock is None:
            return
        with lock:
            if getattr(self, "_ctx", None) is None:
                return
            for module in list(self._modules):
                module._release()
            self._lib.mlirContextDetachDiagnosticHandler(self._ctx,
                                                         self._handler_id)
            self._lib.mlirContextDestroy(self._ctx)
            self._ctx = None

    def _handle(self):
        """The context, for a call that holds the lock."""
        if self._ctx is None:
            raise Error("the Context was used after it was closed")
        return self._ctx

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    # -- operations ------------------------------------------------------

    def parse(self, text):
        """Parses and verifies `text`; returns a `Module`."""
        with self._lock:
            self.diagnostics = []
            # As the tools read programs: a grid with an axis of size 0 is
            # refused before MLIR's verifiers divide by it.
            module = self._lib.overlapModuleCreateParse(self._handle(),
                                                        _ref(text))
            if not module.ptr:
                self._fail("parsing and verification")
            return Module(self, module)

    def run_pipeline(self, text, pipeline):
        """Parses `text`, runs the textual pass pipeline, returns the text."""
        module = self.parse(text)
        module.run_pipeline(pipeline)
        return module.text

    def overlap_pipeline(self, text, **options):
        """Runs ovl-overlap-pipeline with `options` on `text`."""
        module = self.parse(text)
        module.overlap_pipeline(**options)
        return module.text

    def simulate(self, text, hardware="tpu-v4", topology=None, entry=None,
                 device_assignment=None, max_in_flight=0):
        return self.parse(text).simulate(hardware, topology, entry,
                                         device_assignment, max_in_flight)


def _checked_int(name, value, low, high):
    """`value` as the C integer of [low, high] it is passed as: ctypes would
    wrap one out of range silently (2**70 became 0)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError("%s: %r is not an integer" % (name, value))
    if not low <= value <= high:
        raise ValueError("%s: %d is out of range [%d, %d]"
                         % (name, value, low, high))
    return int(value)


def topology_text(topology):
    """A topology as the tools spell it: "AxBxC" as given, a tuple or list
    of ints (2, 2, 1) -> "2x2x1", None -> "" (the default for the grid).
    Anything else raises TypeError, an empty tuple ValueError: passed on
    as text it would be read as the default, or as an invalid topology
    that no longer says what was given."""
    if topology is None or isinstance(topology, str):
        return topology or ""
    if isinstance(topology, (tuple, list)):
        # bool is an int to Python, never an extent.
        if all(isinstance(n, numbers.Integral) and not isinstance(n, bool)
               for n in topology):
            if not topology:
                raise ValueError("topology: an empty %s has no extents"
                                 % type(topology).__name__)
            return "x".join(str(int(n)) for n in topology)
    raise TypeError("topology must be a string like \"2x2x1\", a tuple or "
                    "list of ints like (2, 2, 1), or None; got %r" % (topology,))


def pipeline_options(options):
    """Keyword arguments -> the option string of ovl-overlap-pipeline:
    max_in_flight=2 -> "max-in-flight=2", True -> "true", lists joined
    by commas, topology=(2, 2, 1) -> "topology=2x2x1"."""
    parts = []
    for key, value in options.items():
        if value is None:
            continue
        if key == "topology":
            value = topology_text(value)
        elif isinstance(value, bool):
            value = "true" if value else "false"
        elif isinstance(value, (list, tuple)):
            value = ",".join(str(v) for v in value)
        parts.append("%s=%s" % (key.replace("_", "-"), value))
    return " ".join(parts)


class Module:
    """A parsed module owned by a Context. `text` prints it."""

    def __init__(self, context, handle):
        self.context = context
        self._module = handle
        context._modules.add(self)

    def _release(self):
        with self.context._lock:
            if self._module is not None and self.context._ctx is not None:
                self.context._lib.mlirModuleDestroy(self._module)
            self._module = None

    def __del__(self):
        try:
            self._release()
        except Exception:
            pass

    def _handle(self):
        """The module, for a call that holds its context's lock."""
        if self._module is None:
            raise Error("the module was used after its Context was closed")
        return self._module

    @property
    def text(self):
        out = _Collector()
        l = self.context._lib
        with self.context._lock:
            l.mlirOperationPrint(l.mlirModuleGetOperation(self._handle()),
                                 out.callback, None)
        return out.text()

    def __str__(self):
        return self.text

    def run_pipeline(self, pipeline):
        """Runs a textual pass pipeline in place (with or without the
        builtin.module(...) wrapper)."""
        c = self.context
        with c._lock:
            c.diagnostics = []
            r = c._lib.overlapRunPassPipeline(self._handle(), _ref(pipeline))
            if not r.value:
                c._fail("pass pipeline '%s'" % pipeline)
        return self

    def overlap_pipeline(self, **options):
        """Runs ovl-overlap-pipeline in place; keyword options as in
        docs/Pipeline.md (gate="always", unroll=2, max_in_flight=...)."""
        c = self.context
        text = pipeline_options(options)
        with c._lock:
            c.diagnostics = []
            r = c._lib.overlapRunOverlapPipeline(self._handle(), _ref(text))
            if not r.value:
                c._fail("ovl-overlap-pipeline{%s}" % text)
        return self

    def simulate(self, hardware="tpu-v4", topology=None, entry=None,
                 device_assignment=None, max_in_flight=0):
        """The simulator's report (docs/Simulator.md) as a dict."""
        c = self.context
        topology = topology_text(topology)
        assign = [_checked_int("device_assignment", d, 0, 2**63 - 1)
                  for d in device_assignment or []]
        max_in_flight = _checked_int("max_in_flight", max_in_flight, 0,
                                     2**32 - 1)
        array = (ctypes.c_int64 * max(len(assign), 1))(*assign)
        out = _Collector()
        with c._lock:
            c.diagnostics = []
            r = c._lib.overlapSimulate(
                self._handle(), _ref(entry or ""), _ref(hardware or ""),
                _ref(topology), len(assign), array, max_in_flight,
                out.callback, None)
            if not r.value:
                c._fail("simulation")
        return json.loads(out.text())
