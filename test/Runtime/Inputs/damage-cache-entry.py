"""Damages the one entry of an overlap-run compile cache folder, as a disk
or a killed writer could: `flip` changes the object's last byte (the
header's checksum no longer matches), `truncate` cuts the object in half,
`header` leaves only part of the header.

Usage: damage-cache-entry.py DIR flip|truncate|header
"""

import glob
import sys

directory, how = sys.argv[1], sys.argv[2]
entries = glob.glob(directory + "/*.ovlobj")
if len(entries) != 1:
    sys.exit("expected one entry in %s, found %d" % (directory, len(entries)))
with open(entries[0], "rb") as f:
    data = bytearray(f.read())
HEADER = 80
if how == "flip":
    data[-1] ^= 1
elif how == "truncate":
    data = data[:HEADER + (len(data) - HEADER) // 2]
elif how == "header":
    data = data[:HEADER // 2]
else:
    sys.exit("unknown damage " + how)
with open(entries[0], "wb") as f:
    f.write(data)
