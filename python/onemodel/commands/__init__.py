"""The bodies of the ``onemodel`` commands (``onemodel.cli`` parses the
arguments and calls them): ``info``, ``demo``, ``train``/``finetune``,
``recognize``/``eval``, and the terminal's progress display and plot."""
