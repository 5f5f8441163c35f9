"""The CallPolicy a configuration file asks for: its limit rules counted in-process or in its [store], and its
[audit] trail; None when it asks for neither (the call path then stays as it was)."""

from toolwire_server.policy.audit import AuditLog
from toolwire_server.policy.config import ConfigError, LoadedConfig
from toolwire_server.policy.counting import Counters, MemoryCounters
from toolwire_server.policy.guard import CallPolicy
from toolwire_server.policy.postgres_counters import PostgresCounters


def build_policy(loaded: LoadedConfig, *, processes: int = 1, replica: str | None = None) -> CallPolicy | None:
    """`replica`: the name `serve --replica` gave this process, the audit's default for it."""
    config = loaded.config
    if not config.limits and not config.request_limits and config.audit is None:
        return None
    store = loaded.store_url()
    if (config.limits or config.request_limits) and store is None and processes > 1:
        raise ConfigError(
            f"{loaded.path}: limits with --workers {processes} need a shared [store] (postgres = ...): "
            "counted in each process, every limit would be multiplied by the number of processes"
        )
    counters: Counters = PostgresCounters(store) if store is not None else MemoryCounters()
    audit = config.audit
    database = loaded.audit_database()
    log = (
        AuditLog(database, batch=audit.batch, flush_s=audit.flush_s, retention_days=audit.retention_days)
        if audit is not None and database is not None
        else None
    )
    return CallPolicy(
        list(config.limits),
        counters,
        log,
        request_rules=[r.as_rule() for r in config.request_limits],
        keep_arguments=audit.arguments if audit else False,
        secret_fields=frozenset(audit.secret_fields if audit else ()),
        replica=(audit.replica if audit else None) or replica,
    )
