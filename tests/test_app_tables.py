"""AppTest of the Response tables page."""


from tests.apptest import app_test
from tests.conftest import plain

PETS = "Example: the pet survey (100 participants)"


def open_page():
    at = app_test(timeout=60).run()
    at.switch_page("views/tables.py").run()
    assert not at.exception
    return at


def test_pet_example_shows_the_seed_table_and_passes_the_audit():
    at = open_page()
    at.radio(key="w_tables_source").set_value(PETS).run()
    assert not at.exception
    published = at.dataframe[0].value
    assert published["responses"].tolist() == ["42", "33", "9", "less than 5", "less than 5",
                                               "between 8 and 16"]
    raw = at.dataframe[1].value
    assert raw["responses"].tolist() == [42, 33, 9, 2, 4, 10]
    assert "Audit passed" in at.success[0].value
    assert any("private" in m.value for m in at.markdown)
    assert at.get("download_button")


def test_thresholds_hide_a_question_and_naive_leak_is_explained():
    at = open_page()
    at.radio(key="w_tables_source").set_value(PETS).run()
    at.number_input(key="w_tables_q").set_value(95).run()
    assert "Hidden: fewer than 95 responses" in at.warning[0].value
    at.number_input(key="w_tables_q").set_value(10).run()
    expander_text = " ".join(plain(m.value) for m in at.markdown)  # findings are escaped
    assert "Elephant: the non-response figure narrows its count to 2–4" in expander_text
    at.number_input(key="w_tables_t").set_value(10).run()
    assert at.dataframe[0].value["responses"].tolist()[2] == "less than 10"  # Dolphin 9


def test_current_data_set_questions():
    at = open_page()
    at.multiselect(key="w_tables_questions_Current").set_value(["race", "karnof"]).run()
    assert not at.exception and len(at.subheader) == 2
