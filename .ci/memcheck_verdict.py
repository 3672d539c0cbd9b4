"""Reads a compute-sanitizer memcheck log (with --leak-check full) and
prints "<errors other than leaks> <leaked allocations> <of them
cudareduce's>".

The leak check reports every allocation alive at exit, including the
buffers CuPy caches for itself (its pinned transfer buffer); .ci/sanitize
fails only on errors other than leaks and on leaks allocated by cudareduce
itself (a backtrace through its extension, _cudareduce)."""
import re
import sys

RECORD = re.compile(r"=+ (Invalid|Program hit|Leaked|Malloc|Cuda API|"
                    r"Barrier|Misaligned|Out-of-range|Error)")
blocks = re.split(r"\n(?==+ \S)", open(sys.argv[1], encoding="utf-8",
                                      errors="replace").read())
errors = [b for b in blocks if RECORD.match(b)]
leaks = [b for b in errors if re.match(r"=+ Leaked", b)]
ours = [b for b in leaks if "_cudareduce" in b]
print(len(errors) - len(leaks), len(leaks), len(ours))
