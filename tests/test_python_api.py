"""The Python API: the public names of ``sdc_core.__all__``, loaded lazily from the package."""

import inspect
import subprocess
import sys

import pytest

import sdc_core
from tests.conftest import ROOT


def run_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)


def test_every_public_name_has_one_module_and_all_lists_each_once():
    assert len(set(sdc_core.__all__)) == len(sdc_core.__all__)
    assert sorted(sdc_core.__all__) == sorted(sdc_core._EXPORTS)


@pytest.mark.parametrize("name", sdc_core.__all__)
def test_a_public_name_resolves_to_its_module_and_is_documented(name):
    value = getattr(sdc_core, name)
    module = sdc_core._EXPORTS[name]
    assert value is getattr(sys.modules[module], name)
    doc = inspect.getdoc(value) or ""
    # a dataclass without a docstring gets its signature as one: that is no documentation
    assert doc and not doc.startswith(f"{name}("), f"{name} has no docstring"
    if inspect.isfunction(value):
        sig = inspect.signature(value)
        unannotated = [p for p, v in sig.parameters.items() if v.annotation is v.empty]
        assert not unannotated, f"{name}: parameters without a type hint: {unannotated}"
        assert sig.return_annotation is not sig.empty, f"{name} has no return type hint"
    if inspect.isclass(value):  # what a notebook user calls on a result
        for attr, member in vars(value).items():
            member = member.fget if isinstance(member, property) else member
            if not attr.startswith("_") and inspect.isfunction(member):
                assert inspect.getdoc(member), f"{name}.{attr} has no docstring"


def test_dir_lists_the_public_names_before_they_are_loaded():
    out = run_python("import sdc_core; names = dir(sdc_core); "
                     "assert set(sdc_core.__all__) <= set(names), names; "
                     "assert '__version__' in names; print(len(sdc_core.__all__))")
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) == len(sdc_core.__all__)


def test_importing_the_package_does_not_import_pandas():
    # the command line imports sdc_core for __version__ and answers --help at once
    out = run_python("import sys, sdc_core; assert sdc_core.__version__; "
                     "assert 'pandas' not in sys.modules, 'pandas imported'; "
                     "assert 'numpy' not in sys.modules, 'numpy imported'")
    assert out.returncode == 0, out.stderr


def test_a_name_is_loaded_on_first_use_and_star_import_gives_them_all():
    out = run_python("import sys, sdc_core; f = sdc_core.risk_profile; "
                     "assert 'sdc_core.risk.profile' in sys.modules; "
                     "assert 'risk_profile' in vars(sdc_core); "
                     "ns = {}; exec('from sdc_core import *', ns); "
                     "assert set(sdc_core.__all__) <= set(ns)")
    assert out.returncode == 0, out.stderr


def test_an_unknown_name_is_an_attribute_error_and_submodules_still_import():
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        sdc_core.no_such_name  # noqa: B018
    from sdc_core import rng  # a submodule, not a public name

    assert rng.__name__ == "sdc_core.rng"
