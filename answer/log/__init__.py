"""The answer log: every answer with its attempts, threads, feedback and the content-gap vectors, kept for staff.

`protocol.AnswerLog` is what callers name; `sqlite` (one server) and `postgres` (replicas) implement it, with
`postgres_schema` (numbered migrations), `retention` (how much is kept), `damage` (a damaged SQLite file noticed
and set aside), `secret_file` (the thread secret beside the log), `ratelimit` (question budgets kept in the same
store) and `transfer` (`python -m answer log copy`: one server's log moved to PostgreSQL).
"""
