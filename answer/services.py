"""Build the answer pipeline a `Settings` describes (used by entrypoints only)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from ingest.site import SiteConfig, load_site_config
from ingest.text import key_terms
from retrieval.embedder import Embedder
from retrieval.protocols import StoreReader
from retrieval.search import DenseRetriever, HybridRetriever
from retrieval.services import open_embedder, open_retriever, open_store
from retrieval.snapshot import IndexSnapshot
from retrieval.viewer import Viewer

from .contract.record import AnswerRecord
from .contract.support import DeterministicChecker, SupportChecker
from .contract.written import Writer
from .followup import CarrySubject, Condenser, LLMCondenser
from .gate import AnswerGate
from .gate.features import AnswerExtractor
from .gate.vocabulary import LiveVocabulary
from .generate import ExtractiveGenerator, Generator
from .llm.client import LiteLLMGenerator
from .llm.prompt import DEFAULT_BUDGET_TOKENS, Quoting, passage_budget
from .llm.provider_citations import CitedWriting, ProviderCitationGenerator, citation_provider
from .log.protocol import AnswerLog
from .log.sqlite import SQLiteAnswerLog
from .pipeline import Answerer
from .reports.gap_index import QuestionIndex
from .settings import AnswerSettings as Settings

LOCAL = "local"  # LLM_MODEL=local: a provisioned model served by a llama.cpp child process
# A reply cap: a copied-quote draft of three claims fits in 512 tokens, one naming sentence ids in far fewer;
# a runaway reply stops (and, streamed, keeps the claims it finished). What is not reserved goes to passages.
LOCAL_MAX_TOKENS: dict[Quoting, int] = {"copy": 512, "point": 384}


S = TypeVar("S", bound=Settings)


@contextmanager
def local_llm(settings: S) -> Iterator[S]:
    """With LLM_MODEL=local: the weights provisioned, the llama.cpp child running for the block, and
    settings that point at it; any other settings are yielded unchanged."""
    if settings.llm_model != LOCAL:
        yield settings
        return
    from .llm.local_server import running
    from .llm.local_weights import local_model, provision_local_model

    weights = provision_local_model(settings.models_dir, local_model(settings.local_llm))
    quoting: Quoting = settings.llm_quoting or "point"
    reply = settings.llm_max_tokens or LOCAL_MAX_TOKENS[quoting]
    with running(weights, threads=settings.local_llm_threads, context=settings.local_llm_context,
                 log_path=settings.data_dir / "local-llm.log") as server:
        yield replace(settings, llm_model=server.model, llm_api_base=server.api_base, llm_api_key="local",
                      llm_max_tokens=reply, llm_quoting=quoting,
                      llm_prompt_tokens=settings.llm_prompt_tokens or passage_budget(server.context, reply, quoting))


def open_audit(settings: Settings) -> AnswerLog:
    """The answer log DATABASE_URL names (PostgreSQL, shared by replicas), else the SQLite file under DATA_DIR."""
    if settings.database_url:
        from .log.postgres import PostgresAnswerLog  # psycopg is imported only by a server that uses it

        return PostgresAnswerLog(settings.database_url, retention=settings.log_retention)
    return SQLiteAnswerLog(settings.audit_path, retention=settings.log_retention)


def build_judge(site: SiteConfig, retriever: HybridRetriever, embedder: Any) -> AnswerGate:
    """The answer gate for a site: term rarity from its public chunks, its current version, its own name."""
    public = sorted(Viewer.anonymous().groups)

    def public_chunks() -> tuple[str, Any]:  # the public BM25 index: fresh exactly when search is
        index = retriever.snapshot.index_for(public)
        return index.fingerprint, index.chunks

    extractor = AnswerExtractor(embedder, current_version=site.default_version,
                                vocabulary=LiveVocabulary(public_chunks).current)
    return AnswerGate(extractor, site_terms=frozenset(key_terms(site.name)))


def llm_client(settings: Settings, *, timeout: float | None = None, max_retries: int = 2) -> LiteLLMGenerator:
    """The chat model LLM_MODEL names, as litellm reaches it."""
    return LiteLLMGenerator(
        settings.llm_model, api_base=settings.llm_api_base or None, max_retries=max_retries,
        api_key=settings.llm_api_key or None, timeout=settings.llm_timeout if timeout is None else timeout,
        budget_tokens=settings.llm_prompt_tokens or DEFAULT_BUDGET_TOKENS, max_tokens=settings.llm_max_tokens or None,
        quoting=settings.llm_quoting or "copy",
    )


def build_generator(settings: Settings, embedder: Any = None, judge: AnswerGate | None = None) -> Generator:
    """The drafting LLM with LLM_MODEL and LLM_ROLE=draft (native citations where the provider has them), else the
    extractive one (with LLM_ROLE=write, the default, the model words the answer afterwards: `build_writer`)."""
    if settings.llm_model and settings.llm_role == "draft":
        client = llm_client(settings)
        mode = settings.llm_citations or ("provider" if citation_provider(settings.llm_model) else "json")
        return ProviderCitationGenerator(client) if mode == "provider" else client
    return ExtractiveGenerator(embedder, judge=judge)


WRITE_TIMEOUT = 25.0  # seconds the written answer may take after the quotes (the page's watchdog waits 30)
WRITTEN_SUPPORT = 1.0  # every key term of a written sentence in the quotes it names (quotes' claims need 0.8)


def build_writer(settings: Settings, checker: SupportChecker | None = None) -> Writer | None:
    """The writer of short answers over the verified quotes: LLM_MODEL with LLM_ROLE=write, else none.

    A written sentence is the model's paraphrase, not a quote beside a caption: the deterministic check holds
    it to every key term (measured: at 0.8 a 1.5B model's "30 days … on a monthly subscription" passed on a
    quote about unused months).
    """
    if not settings.llm_model or settings.llm_role != "write":
        return None
    if checker is None or isinstance(checker, DeterministicChecker):
        checker = DeterministicChecker(supported_at=WRITTEN_SUPPORT)
    # Within WRITE_TIMEOUT in all, however many attempts: the quotes are on the page, and the page (and the widget)
    # give up on a stream silent for 30 s; a written answer later than that is left out with a quiet note.
    # Where the provider cites natively (Anthropic, Gemini), it numbers the written sentences, not the model's text.
    client = llm_client(settings, timeout=min(settings.llm_timeout, WRITE_TIMEOUT), max_retries=0)
    mode = settings.llm_citations or ("provider" if citation_provider(settings.llm_model) else "json")
    return Writer(CitedWriting(client) if mode == "provider" else client, checker, attempts=settings.write_attempts,
                  deadline=WRITE_TIMEOUT)


@dataclass(frozen=True)
class Components:
    """What a server runs on, by name and type: the answerer and the parts of it other callers use.

    The web app needs the answer log (threads, feedback, the audit view), the
    embedder (in-process ingests must embed with the model the index was built
    with), the index snapshot both searches read (told when such an ingest
    publishes) and a
    condenser for follow-ups; naming them here spares every caller from
    digging them out of the answerer.
    """

    answerer: Answerer
    audit: AnswerLog | None
    embedder: Embedder | None  # None: the retriever was built elsewhere without one this process can ingest with
    snapshot: IndexSnapshot | None
    condenser: Condenser


def build_components(settings: Settings, *, store: StoreReader | None = None,
                     audit: AnswerLog | None = None) -> Components:
    store = store or open_store(settings)
    embedder = open_embedder(settings)
    retriever = open_retriever(settings, store=store, embedder=embedder)
    site = load_site_config(settings.content_dir) if settings.content_dir.is_dir() else SiteConfig()
    judge = build_judge(site, retriever, embedder)
    audit = audit or open_audit(settings)
    audit.index_gaps(QuestionIndex(embedder, lambda: site.name))  # the name `python -m answer gaps` takes out too
    checker = build_checker(settings)
    writer = build_writer(settings, checker)  # the LLM judge when SUPPORT_JUDGE=llm, else the strict terms check
    answerer = Answerer(
        retriever, build_generator(settings, embedder, judge), checker=checker, audit=audit,
        unverified_policy=settings.unverified_policy, judge=judge, writer=writer,
    )
    # With a writer the follow-up is rewritten offline too: the quotes come first, before any model call.
    return Components(answerer, audit, embedder, retriever.snapshot, condenser_for(answerer.generator))


def components_for(answerer: Answerer) -> Components:
    """The components of an answerer built by its caller (tests, scripts): what it has of them, by type."""
    retriever = answerer.retriever
    return Components(
        answerer,
        audit=answerer.audit if isinstance(answerer.audit, AnswerLog) else None,
        embedder=retriever.embedder if isinstance(retriever, HybridRetriever | DenseRetriever) else None,
        snapshot=retriever.snapshot if isinstance(retriever, HybridRetriever) else None,
        condenser=condenser_for(answerer.generator),
    )


def condenser_for(generator: Generator) -> Condenser:
    """Follow-ups are condensed by the model when the generator is a chat model, else by the offline rule."""
    return LLMCondenser(generator) if isinstance(generator, LiteLLMGenerator) else CarrySubject()


def build_answerer(settings: Settings, *, store: StoreReader | None = None) -> Answerer:
    return build_components(settings, store=store).answerer


def build_checker(settings: Settings) -> SupportChecker:
    """The claim-support checker: deterministic by default, an LLM judge when SUPPORT_JUDGE=llm."""
    if settings.support_judge == "llm":
        from .llm.judge import LLMJudge

        return LLMJudge.from_model(settings.llm_model, api_base=settings.llm_api_base or None,
                                   api_key=settings.llm_api_key or None, timeout=settings.llm_timeout)
    return DeterministicChecker()


def changed_sources(store: StoreReader, record: AnswerRecord) -> dict[str, str]:
    """Cited chunk id → 'changed' or 'removed' when the live index no longer matches the answer."""
    cited = {c.chunk_id: c.hash for claim in record.claims for c in claim.citations}
    live = {chunk.id: chunk.hash for chunk in store.chunks(ids=sorted(cited))}
    return {cid: ("removed" if cid not in live else "changed") for cid, digest in cited.items() if live.get(cid) != digest}
