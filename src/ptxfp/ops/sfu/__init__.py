"""The SFU forms (``.approx`` and ``div.full``): the MUFU primitives per architecture
(``primitives``, ptx-math's method and tables) and the sequences ptxas wraps around them per
(form, target), recorded from the machine code."""
