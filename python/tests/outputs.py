"""What the training-step tests share: comparing every device's outputs
with the expected ones."""

import numpy as np

RTOL = 1e-2  # relative to the largest magnitude of the expected tensor


def mismatches(got, want, labels):
    """The outputs (device:label) that differ beyond RTOL of the expected
    tensor's largest magnitude, or in shape; `got` and `want` are lists per
    device of arrays named by `labels`."""
    bad = []
    for d, (g_dev, w_dev) in enumerate(zip(got, want)):
        assert len(g_dev) == len(w_dev) == len(labels)
        for name, g, w in zip(labels, g_dev, w_dev):
            g, w = np.asarray(g), np.asarray(w)
            if g.shape != w.shape:
                bad.append("%d:%s shape %s != %s" % (d, name, g.shape,
                                                     w.shape))
                continue
            scale = max(float(np.max(np.abs(w))), 1e-6)
            if np.max(np.abs(g - w)) > RTOL * scale:
                bad.append("%d:%s" % (d, name))
    return bad
