"""The app's typed state: what every handler reads from the app, instead of closures over `create_app`.

`create_app` builds one `AppState` and stores it on `app.state.web`; handlers
in the routes modules get it back with `state_of(request)` and find the
settings, the services and the templates by type, along with the few helpers
every page needs (who is asking, the page frame, one turn rendered).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response
from starlette.templating import Jinja2Templates

from answer.contract.result import Answer
from answer.followup import Rewrite
from retrieval.viewer import Viewer
from web.settings import Settings

from . import render
from .failures import Failure
from .identity import read_viewer
from .services import Services


@dataclass(frozen=True)
class AppState:
    settings: Settings
    services: Services
    templates: Jinja2Templates

    def viewer(self, request: Request) -> Viewer:
        """The viewer's groups from the trusted identity header, or anonymous when none is configured.

        Raises IdentityError (a 400) for a header that is repeated, not ASCII, or names a group outside the alphabet.
        """
        header = self.settings.identity_header
        if not header:
            return Viewer.anonymous()
        return read_viewer(header, request.scope.get("headers") or [])

    def context(self, request: Request) -> dict[str, object]:
        """What every page and fragment needs: the site, its declared docs versions, and whether the reader is staff."""
        corpus = self.services.docs.corpus
        return {"site": corpus.site, "versions": corpus.versions,
                "staff": self.settings.staff_group in self.viewer(request).groups}

    def page(self, request: Request, name: str, extra: dict[str, object], status_code: int = 200) -> Response:
        return self.templates.TemplateResponse(request, name, self.context(request) | extra, status_code=status_code)

    def fragment(self, name: str, context: dict[str, object]) -> str:
        return self.templates.get_template(name).render(context)

    def error_page(self, request: Request, problem: Failure, *, full: bool = True, fix: bool = False) -> Response:
        """The failure as a page (or a fragment); with `fix`, what the operator does about it (staff pages only)."""
        return self.templates.TemplateResponse(
            request, "_error.html", {"message": problem.message, "fix": problem.fix if fix else "", "full": full},
            status_code=problem.status)

    def version(self, value: object) -> str | None:
        """The docs version a reader is browsing, if it is one the site has; anything else is ignored."""
        if not isinstance(value, str) or not value.strip():
            return None
        return value.strip() if value.strip() in self.services.docs.corpus.versions else None

    def view(self, answer: Answer, turn_id: str | None = None, asked: str = "",
             next_questions: tuple[str, ...] = ()) -> render.TurnView:
        return render.turn_view(answer, self.services.docs.corpus.site, turn_id or answer.id, self.settings.unverified_policy,
                                asked=asked, next_questions=next_questions)

    async def answer_in_thread(self, question: str, thread_id: str, viewer: Viewer, version: str | None,
                               owner: str) -> tuple[Answer, Rewrite]:
        """Rewrite a follow-up from the thread, answer it, and add the answer to the owner's thread (the page and the API)."""
        services = self.services
        await asyncio.to_thread(services.docs.check_index)
        rewritten = await asyncio.to_thread(services.rewrite, question, thread_id, viewer, version)
        answer = await asyncio.to_thread(lambda: services.answerer.ask(rewritten.question, viewer, version=version))
        await asyncio.to_thread(services.threads.add, thread_id, answer, question, owner)
        return answer, rewritten

    def thread_views(self, thread_id: str, viewer: Viewer) -> list[render.TurnView]:
        """The thread's turns as this viewer may see them (rebuilt for their groups, or withheld)."""
        return [self.view(t.answer, None, t.asked) if t.answer is not None
                else render.withheld_view(t.answer_id, t.asked, stale=t.stale)
                for t in self.services.threads.turns(thread_id, viewer)]


def state_of(request: Request) -> AppState:
    state = request.app.state.web
    if not isinstance(state, AppState):
        raise RuntimeError("the app was not built by create_app")
    return state
