"""Helpers of the test suite, not tests: the API's contract, exact data and
its answers, outcomes, DLPack capsules, the C checks (``c/``) and their
compiler, the bench's synthetic documents.  pytest collects no test here
(no file is named ``test_*.py``); the tests import these as
``support.<module>``, tests/ being on ``sys.path`` (its conftest.py puts it
there in every import mode).
"""
