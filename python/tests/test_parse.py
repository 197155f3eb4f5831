import pytest

import overlap


def test_parse_ok(mlp_1d_text):
    module = overlap.parse(mlp_1d_text)
    assert "ovl.all_gather" in module.text
    assert "func.func @mlp" in overlap.verify(mlp_1d_text)


def test_parse_syntax_error():
    with pytest.raises(overlap.Error, match="expected"):
        overlap.parse("func.func @f( {")


def test_verify_error_has_diagnostic():
    bad = "func.func @f(%a: i32) -> i32 {\n  return\n}\n"
    with pytest.raises(overlap.Error) as info:
        overlap.parse(bad)
    message = str(info.value)
    assert "error:" in message and "returns 1" in message
    assert ":2:3" in message  # the location of the bad return


def test_context_is_reusable(mlp_1d_text):
    with overlap.Context() as ctx:
        with pytest.raises(overlap.Error):
            ctx.parse("garbage")
        assert ctx.parse(mlp_1d_text).text.startswith("module")


def test_module_after_context_closed_raises(mlp_1d_text):
    # It used to segfault: the module's IR was freed with its context.
    ctx = overlap.Context()
    module = ctx.parse(mlp_1d_text)
    ctx.close()
    with pytest.raises(overlap.Error, match="after its Context was closed"):
        module.text
    with pytest.raises(overlap.Error, match="after its Context was closed"):
        module.overlap_pipeline(gate="always")
    with pytest.raises(overlap.Error, match="after its Context was closed"):
        module.simulate()
    del module  # destroying it again is harmless


def test_close_waits_for_calls_in_other_threads(mlp_1d_text):
    # close() while other threads were inside simulate() freed the context
    # under them (a use after free that killed the interpreter). Each call
    # must now return its report or raise Error, whenever close() comes:
    # here, once every thread has had a report and calls again.
    import threading
    ctx = overlap.Context()
    outcomes = [[] for _ in range(4)]
    reported = [threading.Event() for _ in outcomes]

    def simulate_until_closed(mine, first):
        while True:
            try:
                mine.append(ctx.simulate(mlp_1d_text)["step_time_s"] > 0)
            except overlap.Error as e:
                mine.append(str(e))
                return
            first.set()

    threads = [threading.Thread(target=simulate_until_closed, args=args)
               for args in zip(outcomes, reported)]
    for thread in threads:
        thread.start()
    for first in reported:
        first.wait()
    ctx.close()
    for thread in threads:
        thread.join()
    for mine in outcomes:
        assert len(mine) >= 2 and all(r is True for r in mine[:-1])
        assert "used after it" in mine[-1] or \
            "used after its Context was closed" in mine[-1]
    with pytest.raises(overlap.Error, match="after it was closed"):
        ctx.parse(mlp_1d_text)


def test_grid_axis_of_size_zero_is_refused():
    # MLIR 22's verifier of shard.all_slice divides by the grid's axis: the
    # parse used to kill the interpreter with SIGFPE.
    bad = ("shard.grid @grid(shape = 0x4)\n"
           "func.func @f(%x: tensor<8x16xf32>) -> tensor<1x16xf32> {\n"
           "  %s = shard.all_slice %x on @grid grid_axes = [0, 1] "
           "slice_axis = 0 : tensor<8x16xf32> -> tensor<1x16xf32>\n"
           "  return %s : tensor<1x16xf32>\n}\n")
    with pytest.raises(overlap.Error, match="grid axis 0 has size 0"):
        overlap.parse(bad)
