"""What staff read about many answers at once: the content-gap report (gaps, clusters, redaction, export, the
question vectors kept with each answer) and `readable`, the one rule for what a reader may see of a stored answer.
"""
