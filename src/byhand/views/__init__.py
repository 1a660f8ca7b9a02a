"""Views: the pure state functions and ``draw(fig, setting)`` functions behind each chapter's widget and static slider.

A state function turns control values into numbers (fast, tested, no drawing); a draw function turns those numbers
into a figure. One module per chapter topic.
"""
