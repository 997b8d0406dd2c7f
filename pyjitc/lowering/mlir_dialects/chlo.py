"""No op classes: ops of this dialect stay generic OpViews (see __init__)."""
