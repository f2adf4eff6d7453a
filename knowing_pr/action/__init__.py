"""The GitHub Actions environment → a pack, a sticky PR comment, the job summary, step outputs.

``knowing-pr action`` reads everything from the environment (``action.yml`` passes each input
through ``env:``, never through a shell line), so ``run_action(env)`` is the whole entry
point. Collaborators are injected: ``build_pack`` (the pipeline) and ``publisher_factory``
(the GitHub boundary); ``main()`` wires the real ones.

Order of effects, so that a failure late in the run loses as little as possible::

    settings → event → missing commits fetched → pack built
      → manifest file (+ the comment handoff file) → job summary → outputs
      → comment (403: warning and summary only; 422: one smaller comment) → comment-url output

The fallback ladder is comment → job summary → artifact (the manifest directory). With
``fail-on-error: false`` (the default) every error becomes an annotation and the step exits
0; with ``true`` it exits 1. Untrusted text (PR titles, paths, error messages) reaches the
log only as an escaped annotation or inside ``::stop-commands::``.

Two-workflow pattern (fork PRs): a ``pull_request`` run with a read-only token writes
``pr-comment.json`` next to the manifest and uploads that directory as an artifact; a
``workflow_run`` run downloads it into the same place and only posts it, after checking that
the pull request's head is still the commit the artifact was built for (docs/action.md).

Modules: ``settings`` (environment and event → typed records), ``checkout`` (missing commits
fetched), ``outputs`` (manifest, summary, step outputs, workflow-command logging), ``run``
(``run_action``, ``main`` and the default collaborators). This module re-exports the public
names; ``HANDOFF_FILENAME``, ``MANIFEST_FILENAME`` and ``pack_json`` stay importable from here.
"""

from __future__ import annotations

from knowing_pr.action.checkout import ensure_commits
from knowing_pr.action.outputs import HANDOFF_FILENAME as HANDOFF_FILENAME
from knowing_pr.action.outputs import MANIFEST_FILENAME as MANIFEST_FILENAME
from knowing_pr.action.outputs import (
    WorkflowCommandFormatter,
    append_summary,
    write_outputs,
)
from knowing_pr.action.outputs import pack_json as pack_json
from knowing_pr.action.run import (
    PackBuilder,
    Publisher,
    build_pack_with_pipeline,
    main,
    run_action,
)
from knowing_pr.action.settings import ActionSettings, PullRequestContext, read_event

__all__ = [
    "ActionSettings",
    "PackBuilder",
    "Publisher",
    "PullRequestContext",
    "WorkflowCommandFormatter",
    "append_summary",
    "build_pack_with_pipeline",
    "ensure_commits",
    "main",
    "read_event",
    "run_action",
    "write_outputs",
]
