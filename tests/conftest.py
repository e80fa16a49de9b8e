"""Shared fixtures (the reference data sets: copies in tests/data and the built-in examples; the
linkage attack on a release of one, tests/attackers.py) and the test tiers.

Every test gets exactly one tier marker, set by :func:`pytest_collection_modifyitems`:
``unit``, ``app``, ``server``, ``e2e``, ``spark``, ``package`` or ``corpus``; tests that
measure wall time or CPU time, or a server's memory under load, also get ``serial`` and run
alone, after the others (``make test``). A test of one process's own memory (a child's peak
resident memory, tracemalloc) runs beside the others: a neighbour's load does not change it.
``make test-fast`` runs the ``unit`` tier, which never imports Streamlit, without the tests
marked ``slow`` (:data:`SLOW`) or ``serial``.
This module imports no Streamlit either: the AppTest machinery is in tests/apptest.py.

No process a run started outlives it (:func:`pytest_sessionfinish`): a server, its worker
processes, nginx, a browser.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import sys
import time
import uuid
from collections.abc import Coroutine, Generator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import Phase, settings

from bench.server import free_port, live, marked, start_server, stop_server
from sdc_core.data.io import EXAMPLE_PATH, read_table
from sdc_core.examples import example
from tests.attackers import attacked_release


def plain(text: str) -> str:
    """Markdown source as the reader sees it: user text is shown escaped (``ui.logic.text.md``), so
    AppTest's element values hold a backslash before every special character, and an invisible
    word joiner inside what would be linked by itself (``http:⁠//``)."""
    return re.sub(r"\\(.)", r"\1", text).replace("\u2060", "")


#: ``pytest --hypothesis-profile=no-shrink``: report a failing example at once, unshrunk
settings.register_profile("no-shrink", phases=[Phase.explicit, Phase.reuse, Phase.generate])

ROOT = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent
DATA = TESTS / "data"
SHARED_DATA = ROOT.parent / "shared" / "data"

# -- the tiers ---------------------------------------------------------------------------------

TIERS = ("unit", "app", "server", "e2e", "spark", "package", "corpus")

#: Test modules all of whose tests are in one tier that the rules below would not give them
MODULE_TIERS = {
    "test_package.py": "package",  # builds and installs the wheel in a fresh venv
    "test_corpus.py": "corpus",  # the outside corpus through the command line and every page
    "test_load.py": "server",  # sessions through a real server
    "test_processes.py": "server",  # several real servers and their process trees
    "test_uploads_server.py": "server",  # uploads to a real server under a memory budget
}

#: Test modules that import Streamlit (the pages, the Streamlit glue of ``ui/``, AppTest):
#: their tests are in the ``app`` tier unless a rule before it gives them another
APP_MODULES = frozenset({
    "test_app_a11y.py", "test_app_analyses.py", "test_app_attackers.py", "test_app_buys.py",
    "test_app_callback_guard.py", "test_app_class_pace.py", "test_app_control_ranges.py",
    "test_app_data.py",
    "test_app_formula_hostile.py", "test_app_hostile_text.py", "test_app_households.py",
    "test_app_lessons.py", "test_app_likert_survey.py", "test_app_linked_tables.py",
    "test_app_names.py",
    "test_app_pack.py", "test_app_pages.py",
    "test_app_population.py", "test_app_population_protect.py", "test_app_record_swap.py",
    "test_app_risk_attribute.py", "test_app_risk_release.py", "test_app_server_files.py",
    "test_app_shared_work.py", "test_app_sign_in.py", "test_app_synthesis.py",
    "test_app_table_headings.py", "test_app_table_hierarchy.py",
    "test_app_tables.py", "test_app_tradeoffs_analyses.py", "test_app_tradeoffs_attribute.py",
    "test_app_tradeoffs_synthesis.py", "test_app_undo_bursts.py", "test_config_reads.py",
    "test_downloads.py",
    "test_fragments.py", "test_input_audit.py",
    "test_ledger_sharing.py", "test_links.py", "test_memory.py",
    "test_resume.py", "test_security_headers.py", "test_server_answers.py",
    "test_st_client.py", "test_warmup.py", "test_workers.py",
})

#: Tests (``module::function``) of other modules that need Streamlit
APP_TESTS = frozenset({
    "test_audit_bound.py::test_a_closed_tab_cancels_its_tables_job",
    "test_audit_bound.py::test_a_closed_tab_cancels_its_differencing_job",
    "test_band_release.py::test_export_says_when_the_steward_picks_midpoints",
    "test_columns.py::test_the_walk_reaches_k5_on_the_protect_page",
})

#: Fixtures that start a real server: a test that uses one is in the ``server`` tier
SERVER_FIXTURES = frozenset({"app_url", "short_wait_url"})

#: Tests that start a server, nginx, strace or a process tree without such a fixture
SERVER_TESTS = frozenset({
    "test_export_offline.py::test_an_export_sends_no_byte_but_to_127_0_0_1_under_strace",
    "test_ledger_sharing.py::"
    "test_two_hundred_sessions_that_connect_and_leave_leave_room_for_an_upload",
    "test_warmup.py::test_a_server_starts_its_workers_before_any_visitor_only_when_warming_up",
    "test_workshop.py::test_the_page_answers_through_nginx_and_a_first_visit_gets_its_route_cookie",
    "test_workshop.py::test_a_cookie_keeps_a_browser_on_one_process_and_cookies_reach_both",
    "test_workshop.py::test_each_process_has_its_share_of_the_budget_and_the_workers",
    "test_workshop.py::test_a_stop_ends_every_process_the_workshop_started",
})

#: Modules and tests (``module::function``, the module's path in tests/) that measure wall time
#: or CPU time (a table's audit within its time limit among them), a real server's memory as
#: uploads arrive together, stop a server and start one on its port again, or need a page change
#: to land while a 50 MB upload is read: they run alone (``-m serial``), not beside another
#: worker. The peak memory of a child that reads a bomb (tests/test_bombs_capped.py,
#: tests/test_decoded.py) and the ledger's and tracemalloc's counts (tests/test_memory.py) are
#: one process's own and run in the workers.
SERIAL = frozenset({
    "test_load.py", "test_processes.py", "e2e/test_restart.py",
    "test_uploads_server.py", "test_table_memory.py",
    "e2e/test_upload.py::test_leaving_the_page_while_an_upload_loads_keeps_it",
    "e2e/test_disconnect.py::test_closing_the_tab_stops_the_sweep",
    "e2e/test_headers.py::test_every_page_works_on_a_loaded_machine",
    "test_links.py::test_a_recipe_that_unpacks_too_far_is_refused_quickly",
    "test_warmup.py::test_warm_reads_the_example_and_imports_the_pages_modules",
    "test_app_server_files.py::test_a_server_file_is_admitted_before_it_is_read",
})


#: Unit tests that take seconds (an exhaustive or brute-force reference, a subprocess, Kaleido's
#: Chromium, a whole collection), ``module: functions``: ``make test-fast`` leaves them out
#: (:data:`FAST`), ``make test`` runs them. A test is here when it took 1.5 s or more, or 3 s
#: over its parameters, in a run of the whole suite on this machine.
SLOW: dict[str, tuple[str, ...]] = {
    "test_analysis.py": ("test_ols_on_distinct_rows_equals_statsmodels_on_every_row",),
    "test_audit_bound.py": (
        "test_secondary_suppression_of_the_20_cubed_table_stops_at_its_budget",
        "test_the_20_cubed_table_is_audited_with_a_few_programmes",
        "test_the_fast_audit_decides_as_the_definition",
    ),
    "test_band_release.py": ("test_any_dtype_banded_reads_back_as_its_midpoints",),
    "test_bombs_capped.py": (
        "test_each_new_bomb_is_refused_in_one_line_within_the_budget",
        "test_the_cap_refuses_what_no_format_bound_saw",
        "test_the_command_line_refuses_a_bomb_with_exit_2_and_one_line",
        "test_the_estimate_of_a_wide_csv_parses_a_bounded_sample",
    ),
    "test_capped.py": (
        "test_every_format_reads_as_in_this_process",
        "test_the_helper_and_its_child_end_with_the_process_that_started_them",
        "test_the_helper_outlives_the_thread_that_started_it",
    ),
    "test_cell_loss.py": ("test_random_tables_agree_with_loops_over_the_rows",),
    "test_cli.py": (
        "test_apply_writes_every_format_deterministically",
        "test_in_process_runs_give_what_the_subprocess_gives",
    ),
    "test_closeness.py": ("test_bounds_and_brute_force_over_column_kinds",),
    "test_conformance.py": (
        "test_every_method_on_every_kind",
        "test_every_release_agrees_everywhere",
        "test_every_synthetic_release_agrees_everywhere",
    ),
    "test_cross_tables_view.py": (
        "test_one_and_three_way_tables_are_tidy_with_their_status",
        "test_the_table_size_is_the_number_of_cells_and_margins",
    ),
    "test_decoded.py": (
        "test_a_stata_file_with_long_strings_read_in_chunks_equals_one_read",
        "test_each_bomb_is_refused_within_the_allowance",
    ),
    "test_deniability.py": ("test_the_figures_hold_over_column_kinds",),
    "test_differencing.py": (
        "test_a_table_that_passes_its_audit_is_exposed_by_the_merged_table",
        "test_the_command_line_adds_the_pair_to_its_json",
        "test_the_pairs_intervals_are_bounded_in_programmes_and_time",
    ),
    "test_dockerfile.py": ("test_the_image_holds_every_module_the_dashboard_imports",),
    "test_docs_analysis.py": ("test_the_doc_table_is_what_the_core_computes",),
    "test_docs_refs.py": (
        "test_no_reference_to_an_outside_design_document",
        "test_the_files_are_read",
    ),
    "test_dp_and_cell_key.py": ("test_coverage_of_seeded_noise_within_binomial_tolerance",),
    "test_engines.py": (
        "test_apply_equals_pandas",
        "test_cli_engine_commands",
        "test_csv_and_named_record_id",
    ),
    "test_export_offline.py": (
        "test_an_export_opens_no_connection_but_to_127_0_0_1_by_chromiums_own_log",
    ),
    "test_fidelity.py": ("test_any_dtype_gives_distances_in_the_unit_interval",),
    "test_figure_export.py": (
        "test_png_svg_pdf_at_the_chosen_width",
        "test_the_exported_pdf_is_titled_after_the_figure_not_kaleido",
    ),
    "test_formula.py": ("test_formulas_from_the_grammar_give_statsmodels_estimates",),
    "test_formula_grammar.py": (
        "test_a_formula_of_the_grammar_is_estimated_or_refused_by_the_parser",
        "test_a_number_is_read_exactly_when_python_reads_it",
    ),
    "test_formula_hostile.py": (
        "test_the_command_line_refuses_it",
        "test_the_command_line_refuses_it_in_a_subprocess",
        "test_the_command_line_reports_a_huge_design_without_building_it",
    ),
    "test_hostile_corpus.py": ("test_every_bomb_is_one_line",),
    "test_household_attack.py": (
        "test_random_releases_with_blanks_and_distances_equal_the_reference",
        "test_the_panel_attack_equals_the_reference",
    ),
    "test_household_consistency.py": (
        "test_generated_households_stay_consistent_under_every_method",
        "test_no_released_household_carries_two_values",
    ),
    "test_household_deniability.py": ("test_household_figures_equal_the_loop_on_generated_tables",),
    "test_household_risk.py": (
        "test_random_releases_equal_the_dict_reference",
        "test_the_attack_on_a_perturbed_release_equals_the_loop_reference",
    ),
    "test_households.py": ("test_household_level_equals_the_groupby_reference",),
    "test_inference.py": (
        "test_equals_the_brute_force_reference",
        "test_issue_51_a_sensitive_column_of_100000_categories_stays_bounded",
    ),
    "test_layers.py": (
        "test_a_worker_runs_the_protect_pages_job_without_streamlit",
        "test_each_layer_imports_only_the_layers_under_it",
        "test_no_import_cycles_in_the_project",
        "test_the_core_imports_no_ui_streamlit_or_plotly",
        "test_the_pure_ui_logic_imports_no_streamlit_and_no_page_glue",
        "test_the_server_infrastructure_imports_no_page_glue",
    ),
    "test_lessons.py": (
        "test_check_analysis_agrees_with_the_oracle",
        "test_check_perturb_agrees_with_half_the_released_keys",
        "test_synthetic_lesson_equals_the_oracle_and_asks_for_the_smallest_leaf",
    ),
    "test_linkage.py": (
        "test_a_blanked_column_reads_the_same_exact_or_by_distance",
        "test_arbitrary_release_equals_brute_force",
        "test_attackers_equal_the_reference_on_outside_tables",
        "test_drisk_equals_sdcmicro_outputs",
        "test_fast_path_equals_brute_force",
    ),
    "test_linked_tables.py": (
        "test_every_linked_set_passes_its_joint_audit",
        "test_linked_tables_of_outside_data_with_a_code_list_pass_the_joint_audit",
    ),
    "test_measure_declarations.py": (
        "test_the_report_names_every_declared_figure_of_the_parts_it_shows",),
    "test_methods.py": (
        "test_percentile_from_two_order_statistics_is_numpys",
        "test_pram_releases_only_known_categories",
    ),
    "test_microaggregation.py": (
        "test_groups_have_k_to_2k_minus_1_records_and_keep_the_mean",
        "test_mdav_equals_sdcmicro_outputs",
        "test_one_column_mdav_equals_sdcmicro_mdav_and_its_wrapper_runs_onedims",
    ),
    "test_names.py": ("test_every_reported_figure_has_a_name",),
    "test_noise_recode.py": (
        "test_recode_groups_equals_a_lookup_value_by_value_and_is_idempotent",
        "test_recode_min_count_equals_the_count_rule_and_is_idempotent",
    ),
    "test_protect_settings.py": (
        "test_every_harness_recipe_opens_as_it_is_or_not_at_all",
        "test_random_harness_recipes_open_as_they_are_or_not_at_all",
    ),
    "test_python_api.py": ("test_a_name_is_loaded_on_first_use_and_star_import_gives_them_all",),
    "test_python_docs.py": ("test_the_worked_examples_of_docs_python_md_run_as_shown",),
    "test_recipe.py": ("test_design_example_recipe_applies_and_is_byte_identical",),
    "test_record_swap.py": (
        "test_any_table_gets_a_consistent_exchange",
        "test_raising_k_never_swaps_fewer_households",
        "test_where_the_bound_is_reached_a_smaller_k_never_moved_more",
    ),
    "test_release_loss.py": ("test_a_step_on_another_column_never_lowers_the_release_loss",),
    "test_risk_properties.py": (
        "test_adding_a_quasi_identifier_never_increases_fk",
        "test_class_sizes_sum_to_n",
        "test_missing_as_category_sizes_sum_to_n",
        "test_vectorised_wildcard_counts_equal_brute_force",
    ),
    "test_search.py": (
        "test_every_class_at_least_k_is_a_target",
        "test_every_combination_in_the_protect_pages_order",
        "test_pruned_search_finds_the_exhaustive_best_on_actg",
        "test_pruned_search_finds_the_exhaustive_best_on_generated_tables",
        "test_pruned_search_is_exact_under_monotonicity",
        "test_rows_equal_apply_and_compare_of_their_recipes",
    ),
    "test_suda2.py": (
        "test_attribute_level_contributions_equal_sdcmicro",
        "test_dis_scores_as_sdcmicro_evaluates_them",
        "test_dis_scores_by_the_formula_and_their_distance_from_sdcmicro",
        "test_scores_and_contributions_equal_sdcmicro",
        "test_the_true_count_in_sdcmicros_single_precision_matches_112_sets",
        "test_vectorised_suda2_equals_brute_force",
    ),
    "test_suppression_audit.py": (
        "test_a_magnitude_table_passes_the_audit_under_either_rule",
        "test_a_time_limited_exact_search_is_never_worse_than_the_heuristic",
        "test_auto_picks_the_heuristic_past_the_exact_methods_size",
        "test_secondary_suppression_always_passes_the_audit",
        "test_the_audit_matches_enumeration_of_every_consistent_table",
        "test_the_exact_method_is_as_cheap_as_the_cheapest_pattern",
    ),
    "test_sweep.py": ("test_fast_path_equals_full_recomputation",),
    "test_sweep_analysis.py": ("test_a_row_is_its_release_and_random_rows_the_mean_over_seeds",),
    "test_sweep_attribute.py": ("test_an_epsilon_target_picks_the_cheapest_setting",),
    "test_synthesize.py": ("test_records_times_columns_past_the_cap_are_refused_before_any_fit",),
    "test_synthetic_risk.py": ("test_any_small_tables_of_any_dtype_equal_the_loops",),
    "test_table_release.py": (
        "test_amounts_too_large_to_stay_exact_are_refused_before_any_rule",
        "test_one_row_per_cell_and_margin_in_the_tables_order",
    ),
    "test_tiers.py": (
        "test_every_test_has_exactly_one_tier",
        "test_no_test_module_imports_another",
        "test_the_unit_tier_loads_no_streamlit",
    ),
    "test_workshop.py": ("test_an_unreadable_budget_or_worker_setting_is_refused",),
}

def module_tier(path: Path) -> str | None:
    """The tier of every test of the file ``path`` when its name decides it, else None."""
    if TESTS / "e2e" in path.parents:
        return "e2e"
    return MODULE_TIERS.get(path.name)


def tier(item: pytest.Item) -> str:
    """The tier of a test; the first rule that applies decides:

    1. a file under tests/e2e: ``e2e`` (headless Chromium against a real server);
    2. a module of :data:`MODULE_TIERS`: its tier (``package``, ``corpus``, ``server``);
    3. a test of the Spark engine (``spark`` among its parameters, or the ``spark_session``
       fixture): ``spark`` (a JVM);
    4. a test that uses a fixture of :data:`SERVER_FIXTURES` or is in :data:`SERVER_TESTS`:
       ``server`` (a real ``streamlit run``, nginx, strace or a process tree);
    5. a module of :data:`APP_MODULES` or a test of :data:`APP_TESTS`: ``app`` (Streamlit,
       mostly AppTest);
    6. anything else: ``unit`` (no Streamlit, no server, no subprocess but the command line's).

    tests/test_tiers.py checks that the lists name existing modules and tests, that no module is
    in two of them and that the unit tier imports no Streamlit."""
    path = Path(item.path)
    by_name = module_tier(path)
    if by_name:
        return by_name
    name = f"{path.name}::{getattr(item, 'originalname', item.name)}"
    params = getattr(getattr(item, "callspec", None), "params", {})
    if "spark_session" in item.fixturenames or any(
            isinstance(v, str) and v == "spark" for v in params.values()):
        return "spark"
    if SERVER_FIXTURES & set(item.fixturenames) or name in SERVER_TESTS:
        return "server"
    if path.name in APP_MODULES or name in APP_TESTS:
        return "app"
    return "unit"


def serial(item: pytest.Item) -> bool:
    module = Path(item.path).relative_to(TESTS).as_posix()
    return module in SERIAL or f"{module}::{getattr(item, 'originalname', item.name)}" in SERIAL


def slow(item: pytest.Item) -> bool:
    module = Path(item.path).relative_to(TESTS).as_posix()
    return getattr(item, "originalname", item.name) in SLOW.get(module, ())


#: The selection of ``make test-fast``: the unit tier without its :data:`SLOW` tests and its
#: ``serial`` ones (which measure time or memory alone)
FAST = "unit and not slow and not serial"


def unit_only(config: pytest.Config) -> bool:
    """Whether this run selects the unit tier alone (``-m unit``, or ``make test-fast``'s
    :data:`FAST`)."""
    return config.getoption("markexpr", "").strip() in ("unit", FAST)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """``-m unit`` does not import the modules whose every test is in another tier (so the
    unit tier's run loads no Streamlit)."""
    if not unit_only(config) or collection_path.suffix != ".py":
        return None
    if module_tier(collection_path) or collection_path.name in APP_MODULES:
        return True
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Each test's tier (:func:`tier`), ``serial`` mark (:data:`SERIAL`) and ``slow`` mark
    (:data:`SLOW`), before ``-m`` selects."""
    for item in items:
        if item.get_closest_marker(tier(item)) is None:  # tests/e2e marks its own
            item.add_marker(tier(item))
        if serial(item):
            item.add_marker("serial")
        if slow(item):
            item.add_marker("slow")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    """A unit test that loads Streamlit fails: its place is the app tier (:func:`tier`). Seen
    only when nothing loaded Streamlit before, as in ``make test-fast``."""
    before = "streamlit" in sys.modules
    outcome = yield
    if (not before and "streamlit" in sys.modules
            and item.get_closest_marker("unit") is not None):
        raise AssertionError(f"{item.nodeid} is in the unit tier and imported Streamlit: add "
                             "it to APP_MODULES or APP_TESTS in tests/conftest.py")
    return outcome


# -- no process left behind -------------------------------------------------------------------

#: Every process a test run starts has this in its environment, a value of the run's own (set
#: by the run's first process, before it starts any other): whatever its command line (a
#: spawned worker's names no file) and whichever process group it joined
RUN_ENV = "SDC_TEST_RUN"
#: How long the end of a run waits for the processes it started to end (s)
LEFTOVER_WAIT = 15.0


def pytest_configure(config: pytest.Config) -> None:
    """The run's mark (:data:`RUN_ENV`), new for each run (a run inside a test's run has its
    own); pytest-xdist's workers inherit it."""
    if not hasattr(config, "workerinput"):
        os.environ[RUN_ENV] = uuid.uuid4().hex


def command_line(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()[:200]
    except OSError:
        return "(ended)"


def own_tracker() -> int | None:
    """This process's multiprocessing resource tracker (it ends with this process), if any."""
    tracker = sys.modules.get("multiprocessing.resource_tracker")
    return getattr(getattr(tracker, "_resource_tracker", None), "_pid", None)


def end_leftovers(mark: str, wait: float, spare: int | None = None) -> list[str]:
    """The processes marked ``mark`` (:data:`RUN_ENV`) that still run ``wait`` seconds from
    now, but ``spare``, each as its pid and command line; they are then killed."""
    deadline = time.monotonic() + wait
    while ((left := [p for p in marked(RUN_ENV, mark) if p != spare])
           and time.monotonic() < deadline):
        time.sleep(0.2)
    said = [f"{pid} {command_line(pid)}" for pid in left]
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    while live(left) and time.monotonic() < deadline + 5:
        time.sleep(0.05)
    return said


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """At the end of a run (after pytest-xdist's workers have ended): a process the run
    started that still runs fails the run, named with its command line, and is killed."""
    if hasattr(session.config, "workerinput") or RUN_ENV not in os.environ:
        return
    if "ui.infra.workers" in sys.modules:  # this process's own pool (tests run in it)
        sys.modules["ui.infra.workers"].shutdown()
    if "sdc_core.capped" in sys.modules:  # and its capped reader (it ends at exit, after this)
        sys.modules["sdc_core.capped"].stop()
    left = end_leftovers(os.environ[RUN_ENV], LEFTOVER_WAIT, own_tracker())
    if left:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        lines = [f"{len(left)} process(es) the tests started still ran {LEFTOVER_WAIT:g} s "
                 "after the run (now killed):", *left]
        if reporter is not None:
            reporter.line("")
            reporter.write_sep("=", "processes left behind", red=True)
        for line in lines:
            if reporter is not None:
                reporter.write_line(line, red=True)
            else:
                print(line, file=sys.stderr)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# -- fixtures ------------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def apptest_patches(request: pytest.FixtureRequest) -> None:
    """The AppTest patches of tests/apptest.py (:func:`tests.apptest.patch_apptest`) for every
    test of the app and corpus tiers, and for any test once the process has loaded them, through
    the test's ``monkeypatch``: ``monkeypatch.undo()`` lifts them."""
    if ("tests.apptest" not in sys.modules
            and not any(request.node.get_closest_marker(t) for t in ("app", "corpus"))):
        return
    from tests.apptest import patch_apptest

    patch_apptest(request.getfixturevalue("monkeypatch"))


@pytest.fixture(scope="session")
def delete_output_dir() -> None:
    """pytest-playwright empties the output folder (test-results) at the start of each
    session, which is of each xdist worker: after a worker's screenshots, or the parallel run's
    junit XML. ``make test`` empties it once instead."""


@pytest.fixture(scope="session")
def app_url():
    """The address of a real ``streamlit run app.py``, shared by the tests that need one (one
    server a pytest-xdist worker, each on a free port)."""
    port = free_port()
    proc = start_server(port)
    if proc.poll() is not None:  # another process answered on the port
        raise RuntimeError(f"streamlit on port {port} ended at once")
    yield f"http://127.0.0.1:{port}"
    stop_server(proc)


def run_async(coro: Coroutine[Any, Any, Any]) -> Any:
    """``asyncio.run(coro)`` in a thread of its own: when the browser tests run first,
    Playwright's sync API keeps an event loop running in the test thread."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


@pytest.fixture
def sandbox(tmp_path: Path):
    """An empty directory for a hostile payload's marker (tests/formula_corpus.py); it must
    stay empty."""
    box = tmp_path / "sandbox"
    box.mkdir()
    yield box
    assert not list(box.iterdir()), f"a payload wrote {list(box.iterdir())}"


@pytest.fixture(scope="session")
def actg() -> pd.DataFrame:
    return read_table(EXAMPLE_PATH)


@pytest.fixture(scope="session")
def francdat() -> pd.DataFrame:
    return read_table(DATA / "francdat.csv")


@pytest.fixture(scope="session")
def households() -> pd.DataFrame:
    """The built-in example of persons in households."""
    return read_table(example("households").path)


@pytest.fixture(scope="session")
def attacked():
    """ACTG 175 and the linkage attack on its release of tests/attackers.py."""
    return attacked_release()
