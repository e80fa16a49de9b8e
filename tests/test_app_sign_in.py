"""Sign-in (Streamlit's OIDC, ``st.login``) is off unless the operator sets it up; with it,
a signed-out visitor sees only the sign-in button and no data is loaded."""


from tests.apptest import app_test

AUTH = {"redirect_uri": "https://sdc.example.org/oauth2callback", "cookie_secret": "s3cret",
        "client_id": "workbench", "client_secret": "x",
        "server_metadata_url": "https://idp.example.org/.well-known/openid-configuration"}


def test_without_auth_settings_there_is_no_sign_in():
    at = app_test(timeout=60).run()
    assert not at.exception
    assert at.title[0].value == "Data"
    assert "Sign in" not in [b.label for b in at.button]


def test_with_auth_settings_a_signed_out_visitor_only_sees_the_sign_in():
    at = app_test(timeout=60)
    at.secrets["auth"] = AUTH
    at.run()
    assert not at.exception
    assert [t.value for t in at.title] == ["Sign in"]
    assert [b.label for b in at.button] == ["Sign in"]
    assert "dataset" not in at.session_state  # nothing loaded before sign-in
    assert not at.sidebar.markdown and not at.dataframe
