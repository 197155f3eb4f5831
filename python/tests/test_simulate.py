import pytest

import overlap


def test_simulate_report(mlp_1d_text):
    report = overlap.simulate(mlp_1d_text)
    assert report["step_time_s"] > 0
    assert report["num_devices"] == 4
    assert report["hardware"] == "tpu-v4"
    assert report["ops"]


def test_simulate_reports_peak_memory():
    # One 4096-byte argument and two 4096-byte einsum results live at once
    # (as test/Simulator/peak-memory.mlir counts), of the v5e's 16 GB.
    report = overlap.simulate("""
        shard.grid @ring(shape = 4)
        func.func @chain(%a: tensor<1024xf32>) -> tensor<1024xf32> {
          %b = ovl.einsum "i,i->i" %a, %a : tensor<1024xf32>, tensor<1024xf32> -> tensor<1024xf32>
          %c = ovl.einsum "i,i->i" %b, %b : tensor<1024xf32>, tensor<1024xf32> -> tensor<1024xf32>
          return %c : tensor<1024xf32>
        }""", hardware="tpu-v5e")
    assert report["peak_memory_bytes"] == 12288
    assert report["hbm_capacity_bytes"] == 16e9
    assert report["fits_in_memory"] is True


def test_simulate_options(mlp_1d_text):
    report = overlap.simulate(mlp_1d_text, hardware="tpu-v5p",
                              topology="4x1x1", entry="mlp")
    assert report["hardware"] == "tpu-v5p"
    assert report["topology"].startswith("4x1x1")


def test_simulate_error(mlp_1d_text):
    with pytest.raises(overlap.Error):
        overlap.simulate(mlp_1d_text, entry="nope")


def test_decomposed_large_mlp_is_faster(large_mlp):
    text, topology = large_mlp
    base = overlap.simulate(text, "tpu-v4", topology)
    fast = overlap.simulate(overlap.overlap_pipeline(text, topology=topology),
                            "tpu-v4", topology)
    assert fast["step_time_s"] < 0.9 * base["step_time_s"]
    assert fast["exposed_comm_time_s"] < base["exposed_comm_time_s"]


def test_trace(mlp_1d_text):
    report = overlap.trace(mlp_1d_text)
    assert report["step_time_s"] > 0
    cats = {e.get("cat") for e in report["trace"]["traceEvents"]}
    assert {"compute", "wait"} <= cats


def test_simulate_refuses_huge_machines(mlp_1d_text):
    # A std::bad_alloc used to escape the C API and abort the interpreter;
    # the machine's size is now checked before anything is allocated.
    with pytest.raises(overlap.Error, match="more than 1048576 devices"):
        overlap.simulate(mlp_1d_text, topology="1024x1024x1024")


def test_simulate_refuses_devices_that_disagree():
    # Only device 0 gathers: the C API runs ovl-verify-collectives first.
    text = """
shard.grid @ring(shape = 4)
func.func @f(%x: tensor<2x8xf32>) {
  %c0 = arith.constant 0 : index
  %id = ovl.partition_id on @ring axes [0] : index
  %first = arith.cmpi eq, %id, %c0 : index
  scf.if %first {
    %g = ovl.all_gather %x on @ring axes [0] dim 0 : tensor<2x8xf32> -> tensor<8x8xf32>
  }
  return
}
"""
    with pytest.raises(overlap.Error, match="communicate differently"):
        overlap.simulate(text)


def test_simulate_topology_as_tuple_or_list(mlp_1d_text):
    # A tuple used to reach the C API as '' and fail as "invalid topology
    # ''", whatever its extents.
    for topology in ((4, 1, 1), [4, 1, 1]):
        report = overlap.simulate(mlp_1d_text, "tpu-v4", topology)
        assert report["topology"].startswith("4x1x1")
    assert overlap.trace(mlp_1d_text, "tpu-v4", (4, 1, 1))[
        "topology"].startswith("4x1x1")


@pytest.mark.parametrize("topology", [4.0, (4, 1.0, 1), ("4", 1, 1),
                                      (True, 1, 1), {"x": 4}])
def test_simulate_topology_of_another_type(mlp_1d_text, topology):
    with pytest.raises(TypeError, match="tuple or list of ints"):
        overlap.simulate(mlp_1d_text, "tpu-v4", topology)


def test_simulate_topology_empty_tuple(mlp_1d_text):
    # "" would be read as the default topology: refused instead.
    with pytest.raises(ValueError, match="no extents"):
        overlap.simulate(mlp_1d_text, "tpu-v4", ())


def test_pipeline_topology_as_tuple(mlp_1d_text):
    assert "topology=2x2x1" in overlap.pipeline_options({"topology": (2, 2, 1)})
    assert overlap.overlap_pipeline(mlp_1d_text, topology=(4, 1, 1)) == \
        overlap.overlap_pipeline(mlp_1d_text, topology="4x1x1")


def test_trace_devices_and_bound(large_mlp):
    text, topology = large_mlp
    report = overlap.trace(text, "tpu-v4", topology, devices="1,3-4",
                           max_events=5)
    other = report["trace"]["otherData"]
    assert other["traced_devices"] == "1,3-4"
    assert other["spans_written"] <= 5 < other["spans"]
    assert "spans left out" in other["note"]
    pids = {e["pid"] for e in report["trace"]["traceEvents"]
            if e.get("name") == "process_name"}
    assert pids == {1, 3, 4, 8}  # and the links
    with pytest.raises(TypeError, match="non-empty list of ints"):
        overlap.trace(text, "tpu-v4", topology, devices=[0.5])
    with pytest.raises(overlap.Error,
                       match="cannot trace device 9: the program has 8"):
        overlap.trace(text, "tpu-v4", topology, devices=[9])


@pytest.mark.parametrize("kwargs, error", [
    (dict(device_assignment=[2**70, 1, 2, 3]), ValueError),
    (dict(device_assignment=[-1, 1, 2, 3]), ValueError),
    (dict(device_assignment=[0.5, 1, 2, 3]), TypeError),
    (dict(max_in_flight=2**70), ValueError),
    (dict(max_in_flight=-1), ValueError),
    (dict(max_in_flight="2"), TypeError),
])
def test_simulate_refuses_integers_ctypes_would_wrap(mlp_1d_text, kwargs,
                                                     error):
    # Class: a Python integer passed to C. ctypes wraps one out of range
    # silently: [2**70, 1, 2, 3] became [0, 1, 2, 3] and 2**70 slots 0.
    with pytest.raises(error, match="out of range|not an integer"):
        overlap.simulate(mlp_1d_text, topology="4x1x1", **kwargs)
    report = overlap.simulate(mlp_1d_text, topology="4x1x1",
                              device_assignment=[3, 2, 1, 0],
                              max_in_flight=2)
    assert report["step_time_s"] > 0


def test_simulate_checks_max_in_flight_as_the_tools_do(mlp_1d_text):
    # Within what ctypes holds but past the range of every max-in-flight:
    # the C API says what overlap-sim and ovl-schedule say
    # (test/Tools/numeric-field-ranges.test).
    with pytest.raises(overlap.Error, match="max-in-flight must be 0 or an "
                       "integer between 1 and 65536, got 70000"):
        overlap.simulate(mlp_1d_text, topology="4x1x1", max_in_flight=70000)
