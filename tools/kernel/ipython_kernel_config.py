# Installed by the Makefile into .venv/etc/ipython/, where the book's kernels read their configuration.
# ipykernel 7 logs "Kernel is running over TCP without encryption" at every kernel start. The kernels that
# `make book`, `make test` and `make outputs` start listen on 127.0.0.1 for one notebook, so the warning is noise
# that hides real problems in the logs. Only that one message is dropped; every other warning still shows.
import logging


class _DropUnencryptedTcpNotice(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "running over TCP without encryption" not in record.getMessage()


logging.getLogger("IPKernelApp").addFilter(_DropUnencryptedTcpNotice())

# Inline figures carry no "Software: Matplotlib version …" chunk, so a readers' notebook re-executed with the same
# numbers gives the same bytes (`make outputs`), whatever matplotlib release made it.
c = get_config()  # noqa: F821  (provided by IPython when it reads this file)
c.InlineBackend.print_figure_kwargs = {"bbox_inches": "tight", "metadata": {"Software": None}}
