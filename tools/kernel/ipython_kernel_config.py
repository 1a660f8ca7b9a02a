# Installed by the Makefile into .venv/etc/ipython/, where the book's kernels read their configuration.
# ipykernel 7 logs "Kernel is running over TCP without encryption" at every kernel start. The kernels that
# `make book`, `make test` and `make outputs` start listen on 127.0.0.1 for one notebook, so the warning is noise
# that hides real problems in the logs. Only that one message is dropped; every other warning still shows.
import logging


class _DropUnencryptedTcpNotice(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "running over TCP without encryption" not in record.getMessage()


logging.getLogger("IPKernelApp").addFilter(_DropUnencryptedTcpNotice())
