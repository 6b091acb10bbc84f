"""The export passes: what runs after propagation to hand the module on
(https://openxla.org/shardy/sdy_export_passes; order in upstream's
``shardy/dialect/sdy/transforms/export/export_pipeline.cc``). One module per pass, named
after upstream's ``.cc`` (``remove_ag_rs_for_cmv1`` abbreviates
``remove_all_gather_reduce_scatter_for_cmv1``); a pass split over several files is a package
of that name (``pad_for_divisibility``, ``resolve_permutation_factors``,
``convert_global_to_local``). Helpers several export passes share:
``explicit_reshards_util`` (upstream ``explicit_reshards_util.cc``), ``collective_inserter``
(the collective choice of ``reshard_to_collectives.cc``) and ``lowering`` (op builders, as
upstream's ``export/utils.cc``)."""
