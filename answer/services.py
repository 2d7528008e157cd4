"""Build the answer pipeline a `Settings` describes (used by entrypoints only)."""

from __future__ import annotations

from typing import Any

from ingest.settings import Settings
from ingest.site import SiteConfig, load_site_config
from retrieval.protocols import StoreReader
from retrieval.search import HybridRetriever
from retrieval.services import open_embedder, open_retriever, open_store
from retrieval.viewer import Viewer

from .audit import SQLiteAuditLog
from .extract import AnswerExtractor
from .generate import ExtractiveGenerator, Generator
from .pipeline import Answerer
from .relevance import RelevanceJudge
from .support import DeterministicChecker, SupportChecker, key_terms
from .vocabulary import LiveVocabulary


def open_audit(settings: Settings) -> SQLiteAuditLog:
    return SQLiteAuditLog(settings.audit_path)


def build_judge(site: SiteConfig, retriever: HybridRetriever, embedder: Any) -> RelevanceJudge:
    """The answer gate for a site: term rarity from its public chunks, its current version, its own name."""
    public = sorted(Viewer.anonymous().groups)

    def public_chunks() -> tuple[str, Any]:  # the public BM25 index: fresh exactly when lexical search is
        index = retriever.lexical.index_for(public)
        return index.fingerprint, index.chunks

    extractor = AnswerExtractor(embedder, current_version=site.default_version,
                                vocabulary=LiveVocabulary(public_chunks).current)
    return RelevanceJudge(extractor, site_terms=frozenset(key_terms(site.name)))


def build_generator(settings: Settings, embedder: Any = None, judge: RelevanceJudge | None = None) -> Generator:
    """The LLM generator when LLM_MODEL is set (native citations where the provider has them), else the extractive one."""
    if settings.llm_model:
        from .llm import LiteLLMGenerator
        from .provider_citations import ProviderCitationGenerator, citation_provider

        client = LiteLLMGenerator(
            settings.llm_model, api_base=settings.llm_api_base or None,
            api_key=settings.llm_api_key or None, timeout=settings.llm_timeout,
        )
        mode = settings.llm_citations or ("provider" if citation_provider(settings.llm_model) else "json")
        return ProviderCitationGenerator(client) if mode == "provider" else client
    return ExtractiveGenerator(embedder, judge=judge)


def build_answerer(settings: Settings, *, store: StoreReader | None = None) -> Answerer:
    store = store or open_store(settings)
    embedder = open_embedder(settings)
    retriever = open_retriever(settings, store=store, embedder=embedder)
    site = load_site_config(settings.content_dir) if settings.content_dir.is_dir() else SiteConfig()
    judge = build_judge(site, retriever, embedder)
    return Answerer(
        retriever, build_generator(settings, embedder, judge), checker=build_checker(settings), audit=open_audit(settings),
        unverified_policy=settings.unverified_policy, judge=judge,
    )


def build_checker(settings: Settings) -> SupportChecker:
    """The claim-support checker: deterministic by default, an LLM judge when SUPPORT_JUDGE=llm."""
    if settings.support_judge == "llm":
        from .judge import LLMJudge

        return LLMJudge.from_model(settings.llm_model, api_base=settings.llm_api_base or None,
                                   api_key=settings.llm_api_key or None, timeout=settings.llm_timeout)
    return DeterministicChecker()


def changed_sources(store: StoreReader, record: dict[str, Any]) -> dict[str, str]:
    """Cited chunk id → 'changed' or 'removed' when the live index no longer matches the answer."""
    cited = {c["chunk_id"]: c["hash"] for claim in record.get("claims", []) for c in claim["citations"]}
    live = {chunk.id: chunk.hash for chunk in store.chunks(ids=sorted(cited))}
    return {cid: ("removed" if cid not in live else "changed") for cid, digest in cited.items() if live.get(cid) != digest}
