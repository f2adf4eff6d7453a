"""CommentPublisher against the real stand-in GitHub server (tests/fake_github.py); no HTTP mocks."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from fake_github import ACTIONS_BOT_LOGIN, FakeGitHub, Fault

from knowing_pr.errors import GitHubAuthError, GitHubError
from knowing_pr.github import (
    COMMENT_MARKER,
    CommentForbidden,
    CommentPublisher,
    CommentTooLarge,
    RetryPolicy,
    mark_body,
    pack_root_marker,
)

TOKEN = "ghs_CANARY_token_0123456789"
REPO = "octo/widgets"
PR = 7
ROOT_A = "a" * 64
ROOT_B = "b" * 64
COMMENTS = f"/repos/{REPO}/issues/{PR}/comments"
ONE_COMMENT = f"/repos/{REPO}/issues/comments/*"


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    with FakeGitHub(token=TOKEN, user_login="knowing-bot") as server:
        server.add_pull(REPO, PR)
        yield server


def publisher(
    gh: FakeGitHub,
    *,
    token: str | None = TOKEN,
    max_wait_s: float = 5.0,
    timeout_s: float = 30,
    **kwargs: object,
) -> CommentPublisher:
    """A publisher against the stand-in server. Its request timeout is one no busy machine reaches
    (a request that timed out would be retried and change the counts a test asserts); the test of
    a client timeout sets a short one."""
    return CommentPublisher(
        token=token,
        api_url=gh.base_url,
        repository=REPO,
        pr_number=PR,
        retry=RetryPolicy(max_attempts=4, max_total_wait_s=max_wait_s, base_backoff_s=0.01),
        timeout_s=timeout_s,
        seconds_between_writes=None,
        **kwargs,  # type: ignore[arg-type]
    )


def ours(gh: FakeGitHub, login: str = "knowing-bot") -> list[str]:
    return [c.body for c in gh.comments(REPO, PR) if COMMENT_MARKER in c.body and c.user == login]


def test_first_run_creates_one_marked_comment(gh: FakeGitHub) -> None:
    result = publisher(gh).upsert_comment("## Context\nbody", ROOT_A)

    assert result.action == "created"
    [comment] = gh.comments(REPO, PR)
    assert comment.id == result.comment_id
    assert comment.user == "knowing-bot"
    assert comment.body.startswith(COMMENT_MARKER + "\n" + pack_root_marker(ROOT_A) + "\n")
    assert comment.body.endswith("## Context\nbody")
    assert result.url.endswith(f"#issuecomment-{comment.id}")
    # happy path: GET /user, one list page, one POST
    assert len(gh.log) == 3


def test_new_pack_root_edits_the_same_comment(gh: FakeGitHub) -> None:
    first = publisher(gh).upsert_comment("first", ROOT_A)
    second = publisher(gh).upsert_comment("second", ROOT_B)

    assert second.action == "updated"
    assert second.comment_id == first.comment_id
    [comment] = gh.comments(REPO, PR)
    assert pack_root_marker(ROOT_B) in comment.body and comment.body.endswith("second")
    assert gh.count("PATCH", ONE_COMMENT) == 1
    assert gh.count("POST", COMMENTS) == 1


def test_rerun_with_same_pack_root_writes_nothing(gh: FakeGitHub) -> None:
    publisher(gh).upsert_comment("same body", ROOT_A)
    writes_before = gh.writes()

    result = publisher(gh).upsert_comment("same body", ROOT_A)

    assert result.action == "unchanged"
    assert gh.writes() == writes_before
    assert gh.count("PATCH") == 0
    assert len(gh.comments(REPO, PR)) == 1


def test_forbidden_write_raises_comment_forbidden(gh: FakeGitHub) -> None:
    gh.script("POST", COMMENTS, Fault(403, {"message": "Resource not accessible by integration"}))

    with pytest.raises(CommentForbidden) as caught:
        publisher(gh).upsert_comment("x", ROOT_A)

    assert "Resource not accessible by integration" in caught.value.message
    assert "pull-requests: write" in (caught.value.hint or "")
    assert gh.count("POST", COMMENTS) == 1  # a plain 403 is not retried
    assert gh.comments(REPO, PR) == []


@pytest.mark.parametrize("status", [500, 502, 503])
def test_server_error_twice_then_success_gives_exactly_one_comment(gh: FakeGitHub, status: int) -> None:
    gh.script("POST", COMMENTS, Fault(status), Fault(status))

    result = publisher(gh).upsert_comment("x", ROOT_A)

    assert result.action == "created" and result.retries == 2
    assert gh.count("POST", COMMENTS) == 3
    assert len(ours(gh)) == 1
    assert result.comment_id == gh.comments(REPO, PR)[0].id


def test_post_applied_then_502_leaves_exactly_one_comment(gh: FakeGitHub) -> None:
    gh.script("POST", COMMENTS, Fault(502, apply=True))

    result = publisher(gh).upsert_comment("x", ROOT_A)

    assert gh.count("POST", COMMENTS) == 2  # the retry created a duplicate ...
    assert result.deleted_duplicates == 1  # ... which was removed
    [comment] = gh.comments(REPO, PR)
    assert comment.id == result.comment_id
    assert comment.body == mark_body("x", ROOT_A)


def test_post_applied_then_client_timeout_leaves_exactly_one_comment(gh: FakeGitHub) -> None:
    gh.script("POST", COMMENTS, Fault(apply=True, delay_s=1.6))

    result = publisher(gh, timeout_s=1).upsert_comment("x", ROOT_A)

    assert result.retries >= 1
    assert len(gh.comments(REPO, PR)) == 1
    assert result.comment_id == gh.comments(REPO, PR)[0].id


def test_server_errors_exhaust_the_attempts_with_a_clear_error(gh: FakeGitHub) -> None:
    gh.script("GET", COMMENTS, *[Fault(503)] * 10)

    with pytest.raises(GitHubError) as caught:
        publisher(gh).upsert_comment("x", ROOT_A)

    assert "503" in caught.value.message
    assert caught.value.hint == "gave up after 4 attempts"
    assert gh.count("GET", COMMENTS) == 4


def test_bad_token_gives_auth_error_naming_the_token(gh: FakeGitHub) -> None:
    with pytest.raises(GitHubAuthError) as caught:
        publisher(gh, token="ghs_wrong_CANARY").upsert_comment("x", ROOT_A)

    assert caught.value.message == "the GitHub token was rejected (401)"
    assert "github-token" in (caught.value.hint or "")
    assert "CANARY" not in str(caught.value) + (caught.value.hint or "")
    assert gh.count() == 1  # 401 is not retried


def test_missing_token_names_the_permissions_block(gh: FakeGitHub) -> None:
    with pytest.raises(GitHubAuthError) as caught:
        publisher(gh, token="")

    assert "permissions: pull-requests: write" in (caught.value.hint or "")
    assert "github-token" in (caught.value.hint or "")
    assert gh.count() == 0


def test_deleted_pull_request_gives_a_clear_404(gh: FakeGitHub) -> None:
    gh.repos[REPO].pop(PR)

    with pytest.raises(GitHubError) as caught:
        publisher(gh).upsert_comment("x", ROOT_A)

    assert caught.value.message == f"pull request #{PR} not found in {REPO}"


def test_body_too_long_is_reported_by_server_and_locally(gh: FakeGitHub) -> None:
    with pytest.raises(CommentTooLarge):
        publisher(gh, max_body_bytes=200_000).upsert_comment("x" * 70_000, ROOT_A)
    assert gh.count("POST", COMMENTS) == 1  # the server said 422: no retry

    with pytest.raises(CommentTooLarge):
        publisher(gh).upsert_comment("é" * 40_000, ROOT_A)  # 80,000 bytes: refused before any call
    assert gh.count("POST", COMMENTS) == 1


def test_thirty_comments_over_pages_find_ours_on_the_last_page() -> None:
    with FakeGitHub(token=TOKEN, user_login="knowing-bot", page_size=10) as gh:
        gh.add_pull(REPO, PR)
        for i in range(29):
            gh.add_comment(REPO, PR, f"review note {i}", user=f"user{i % 3}")
        mine = gh.add_comment(REPO, PR, mark_body("old", ROOT_A), user="knowing-bot")

        result = publisher(gh).upsert_comment("new", ROOT_B)

        assert result.action == "updated" and result.comment_id == mine.id
        assert gh.count("GET", COMMENTS) == 3
        assert gh.count("POST", COMMENTS) == 0
        assert len(gh.comments(REPO, PR)) == 30
        assert gh.comments(REPO, PR)[-1].body.endswith("new")


def test_impostor_with_our_marker_is_left_alone(gh: FakeGitHub) -> None:
    impostor_body = mark_body("I am not the bot", ROOT_A)
    impostor = gh.add_comment(REPO, PR, impostor_body, user="mallory")

    result = publisher(gh).upsert_comment("real", ROOT_B)

    assert result.action == "created" and result.comment_id != impostor.id
    bodies = {c.id: c.body for c in gh.comments(REPO, PR)}
    assert bodies[impostor.id] == impostor_body
    assert gh.count("PATCH") == gh.count("DELETE") == 0


def test_minimized_comment_of_ours_is_skipped(gh: FakeGitHub) -> None:
    hidden = gh.add_comment(REPO, PR, mark_body("outdated", ROOT_A), user="knowing-bot", minimized=True)

    result = publisher(gh).upsert_comment("fresh", ROOT_B)

    assert result.action == "created" and result.comment_id != hidden.id
    assert gh.comments(REPO, PR)[0].body == mark_body("outdated", ROOT_A)
    assert gh.count("POST", "/graphql") == 1


def test_several_of_ours_keep_the_oldest_and_delete_the_rest(gh: FakeGitHub) -> None:
    oldest = gh.add_comment(REPO, PR, mark_body("one", ROOT_A), user="knowing-bot")
    gh.add_comment(REPO, PR, "a human", user="alice")
    gh.add_comment(REPO, PR, mark_body("two", ROOT_A), user="knowing-bot")
    gh.add_comment(REPO, PR, mark_body("three", ROOT_A), user="knowing-bot")

    result = publisher(gh).upsert_comment("four", ROOT_B)

    assert (result.action, result.comment_id, result.deleted_duplicates) == ("updated", oldest.id, 2)
    assert [c.user for c in gh.comments(REPO, PR)] == ["knowing-bot", "alice"]
    assert gh.comments(REPO, PR)[0].body == mark_body("four", ROOT_B)


def test_actions_token_without_user_endpoint_falls_back_to_the_actions_bot() -> None:
    with FakeGitHub(token=TOKEN, user_login=None) as gh:
        gh.add_pull(REPO, PR)
        first = publisher(gh).upsert_comment("x", ROOT_A)
        second = publisher(gh).upsert_comment("y", ROOT_B)

        assert (first.action, second.action) == ("created", "updated")
        assert second.comment_id == first.comment_id
        assert [c.user for c in gh.comments(REPO, PR)] == [ACTIONS_BOT_LOGIN]


class RecordingSleep:
    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
        time.sleep(seconds)


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (429, "Too Many Requests"),
        (403, "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."),
    ],
)
def test_rate_limits_honour_retry_after_within_the_bound(gh: FakeGitHub, status: int, message: str) -> None:
    gh.script("POST", COMMENTS, Fault(status, {"message": message}, {"Retry-After": "1"}))
    sleep = RecordingSleep()

    started = time.monotonic()
    result = publisher(gh, sleep=sleep).upsert_comment("x", ROOT_A)
    elapsed = time.monotonic() - started

    assert sleep.waits == [1.0]
    assert elapsed >= 1.0  # it waited; how much longer the rest took is the machine's business
    assert result.waited_s == 1.0
    assert len(gh.comments(REPO, PR)) == 1


def test_primary_rate_limit_waits_until_reset(gh: FakeGitHub) -> None:
    reset = int(time.time()) + 1
    headers = {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(reset)}
    gh.script("GET", COMMENTS, Fault(403, {"message": "API rate limit exceeded for installation"}, headers))
    sleep = RecordingSleep()

    publisher(gh, sleep=sleep).upsert_comment("x", ROOT_A)

    assert len(sleep.waits) == 1 and 0.0 <= sleep.waits[0] <= 2.0
    assert len(gh.comments(REPO, PR)) == 1


def test_retry_after_beyond_the_bound_gives_up_without_waiting(gh: FakeGitHub) -> None:
    gh.script("POST", COMMENTS, Fault(429, {"message": "slow down"}, {"Retry-After": "120"}))
    sleep = RecordingSleep()

    with pytest.raises(GitHubError) as caught:
        publisher(gh, sleep=sleep, max_wait_s=5.0).upsert_comment("x", ROOT_A)

    assert sleep.waits == []
    assert "5 s limit" in (caught.value.hint or "")
    assert gh.comments(REPO, PR) == []


def test_mark_body_is_idempotent_and_rejects_bad_roots() -> None:
    marked = mark_body("hello", ROOT_A)
    assert mark_body(marked, ROOT_A) == marked
    with pytest.raises(GitHubError):
        mark_body(marked, ROOT_B)  # carries another pack's marker
    with pytest.raises(GitHubError):
        mark_body("hello", ROOT_A.upper())


def test_repr_never_shows_the_token(gh: FakeGitHub) -> None:
    assert TOKEN not in repr(publisher(gh))
