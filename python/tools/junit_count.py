"""junit_count.py JUNIT_XML: print "PASSED FAILED SKIPPED" for a pytest junit file.

Shared by run_tests.sh and test_versions.sh. A missing or unreadable file
counts as one failure (pytest did not get as far as writing it).
"""
import sys
import xml.etree.ElementTree as ET

try:
    root = ET.parse(sys.argv[1]).getroot()
except Exception:
    print(0, 1, 0)
    sys.exit()
suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
total = sum(int(s.get("tests", 0)) for s in suites)
bad = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
skipped = sum(int(s.get("skipped", 0)) for s in suites)
print(total - bad - skipped, bad, skipped)
