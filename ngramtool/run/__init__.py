"""A hash run: the request, its plan, the executors that run its jobs, and the stages of one job
(pipeline, write-behind, disk space, progress, CPU time per stage, signals).

Nothing is imported here, so the leaves below (``writeback``, ``profiling``, ``progress``,
``signals``) can be used by the on-disk formats without loading the run machinery."""
