"""What a model's hash is made of: named presets, released models' configs, and the object
users hold, :class:`~ngramtool.model.mapping.NgramHashMapping`."""
