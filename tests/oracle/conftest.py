"""PyTorch as an oracle: provides the ``torch`` fixture to every test in tests/oracle/.

Without torch these tests are skipped, unless the environment sets BYHAND_REQUIRE_ORACLE=1 (as CI does):
then a missing torch is an error, so CI can never pass by silently skipping its strongest check.
Every test runs with torch's default dtype set to float64 and a fixed seed; both are restored afterwards.
"""
import importlib
import os

import pytest


@pytest.fixture(scope="session")
def torch():
    """The torch module; a skip when it is missing, or an error when BYHAND_REQUIRE_ORACLE=1."""
    if os.environ.get("BYHAND_REQUIRE_ORACLE") == "1":
        try:
            return importlib.import_module("torch")
        except ImportError as exc:  # an ERROR, not a skip: the oracle was required
            raise RuntimeError("BYHAND_REQUIRE_ORACLE=1 but torch is not importable: " + str(exc)) from exc
    return pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _float64_and_seed(torch):
    """Run each oracle test in float64 with torch.manual_seed(0), then restore the previous default dtype."""
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    torch.manual_seed(0)
    yield
    torch.set_default_dtype(previous)
