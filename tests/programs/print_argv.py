"""Prints its own arguments as JSON on one line, after a marker."""

import json
import sys

import acl

acl.init()
print("ARGV=" + json.dumps(sys.argv[1:]))
acl.finalize()
