"""The ``virtualcrime`` command line: a thin layer over the packages below it."""
