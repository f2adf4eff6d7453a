"""knowing-pr: the code a pull request touches, ranked and packed into a reviewer's budget."""

__version__ = "0.1.0"
