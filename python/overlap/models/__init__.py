"""Program generators, pure Python (no C API library, no numpy needed):

  mlp  the paper's figure 2 / figure 3 MLPs (python3 -m overlap.models.mlp)
  gpt  GPT transformer layers of the benchmark ladder with the 2-D strategy
       (python3 -m overlap.models.gpt)

bench/schedule/mlp.py and bench/gpt-ladder/gen.py are command-line shims of
these modules; overlap.builders wraps them as functions.
"""


def positive_int(text):
    """argparse type of a count: an integer of at least 1. A zero or a
    negative size is refused where it is read, not taken for "unset"."""
    import argparse
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(
            "'%s' is not a positive integer" % text)
    return value


def write_program(text, out):
    """Writes a generated program to the file `out`, or to stdout when `out`
    is empty (the generators' --out)."""
    import sys
    if out:
        with open(out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
