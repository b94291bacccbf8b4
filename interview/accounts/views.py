"""Account pages: sign up and log in (keeping the session's progress), password reset, API tokens."""

from __future__ import annotations

import unicodedata

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods

from interview import ratelimit
from interview.accounts.forms import EmailForm, SignUpForm, TokenForm, focus_first_error
from interview.accounts.tokens import create_token
from interview.visitors import client_address
from lessons import services
from lessons.models import ApiToken


@require_http_methods(["GET", "HEAD", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("home")
    if request.method == "POST":
        # Every attempt counts: the form says when a user name is taken, and the limit bounds how
        # fast anyone can learn which names exist that way.
        counted = ratelimit.hit("signup", client_address(request))
        if not counted.allowed:
            return ratelimit.too_many_requests(request, counted)
    next_page = safe_next(request)
    form = SignUpForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        learner_id = request.session.get(services.SESSION_KEY)
        user = form.save()
        # No backend named: login() takes the one in AUTHENTICATION_BACKENDS. A session that names a
        # backend not in that list is dropped on the next request, signing the new learner straight out.
        login(request, user)
        services.adopt_session_progress(request, learner_id)
        messages.success(request, "Account created. Your progress so far is saved to it.")
        # Without a page to go back to, where log-in goes: the lessons, whose main button starts the
        # first one or continues where the learner left off (results would be empty for a newcomer).
        return redirect(next_page or settings.LOGIN_REDIRECT_URL)
    focus_first_error(form)
    context = {"form": form, "next": next_page}
    return render(request, "accounts/signup.html", context, status=400 if form.errors else 200)


def safe_next(request: HttpRequest) -> str:
    """Return the page to go back to (`next`), if it is on this site; else ""."""
    candidate = request.POST.get("next") or request.GET.get("next") or ""
    allowed = url_has_allowed_host_and_scheme(
        candidate, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    return candidate if allowed else ""


class LogOutView(auth_views.LogoutView):
    """Log out (POST only), and say so on the page it leads to: it looked like any visit to the home page."""

    def post(self, request, *args, **kwargs):
        response = super().post(request, *args, **kwargs)
        # Added after the session is flushed: the message travels in its cookie (FallbackStorage).
        messages.info(request, "You are logged out. Log in to pick up where you left off.")
        return response


class LogInView(auth_views.LoginView):
    """Log in within the limits, then merge the anonymous session's progress into the account.

    Three limits: attempts per address; failures per account and address, so that an attacker
    elsewhere cannot lock the owner out of their own address; and a much higher ceiling of
    failures per account from all addresses together, against guessing from many addresses.
    A browser that has signed in to the account before carries a signed "known device" cookie
    and is spared that ceiling, so an attacker with many addresses who reaches it still cannot
    lock the owner out of their own browser (OWASP's device cookies).
    """

    template_name = "accounts/login.html"
    redirect_authenticated_user = True
    http_method_names = ["get", "head", "post"]  # FormView would run post() for PUT

    def post(self, request, *args, **kwargs):
        address = client_address(request)
        per_address = ratelimit.hit("login", address)
        # The account name as authentication reads it (UsernameField: stripped, NFKC), so "ａlice"
        # (fullwidth) counts against "alice", whom it would sign in as.
        account = self.get_form_class()(request).fields["username"].to_python(request.POST.get("username"))
        # Each attempt takes one failure in advance, so concurrent attempts cannot overshoot;
        # form_valid gives it back, and so does an attempt refused here (it was never tried).
        limits = [("login_account_address", f"{account}\n{address}")]
        if not is_known_device(request, account):
            limits.append(("login_account", account))
        self.failures = [ratelimit.hit(name, identity) for name, identity in limits]
        refused = [counted for counted in (per_address, *self.failures) if not counted.allowed]
        if refused:
            for taken in self.failures:
                taken.undo()
            # The longest wait: after a shorter one the learner would only be refused again.
            longest = max(refused, key=lambda counted: counted.retry_after)
            return ratelimit.too_many_requests(request, longest, "accounts/429.html")
        return super().post(request, *args, **kwargs)

    def form_invalid(self, form):
        focus_first_error(form)
        return super().form_invalid(form)

    def form_valid(self, form):
        for taken in self.failures:
            taken.undo()
        learner_id = self.request.session.get(services.SESSION_KEY)
        response = super().form_valid(form)
        services.adopt_session_progress(self.request, learner_id)
        remember_device(response, form.get_user().get_username())
        # Said on the page it leads to, as signing up and logging out are.
        kept = " What you answered before logging in is added to your account." if learner_id else ""
        messages.success(self.request, f"You are logged in.{kept}")
        return response


KNOWN_DEVICE_COOKIE = "known_device"
KNOWN_DEVICE_SALT = "interview.accounts.known-device"
KNOWN_DEVICE_SECONDS = 365 * 24 * 3600


def remember_device(response: HttpResponse, account: str) -> None:
    """Mark the browser as one the account has signed in from (signed, so it cannot be forged)."""
    response.set_signed_cookie(
        KNOWN_DEVICE_COOKIE,
        account,
        salt=KNOWN_DEVICE_SALT,
        max_age=KNOWN_DEVICE_SECONDS,
        secure=settings.SESSION_COOKIE_SECURE,
        httponly=True,
        samesite="Lax",
    )


def is_known_device(request: HttpRequest, account: str) -> bool:
    """Return whether the browser signed in to ``account`` before (within a year)."""
    remembered = request.get_signed_cookie(
        KNOWN_DEVICE_COOKIE, default=None, salt=KNOWN_DEVICE_SALT, max_age=KNOWN_DEVICE_SECONDS
    )
    return remembered is not None and remembered == account


def reset_account(email: str) -> str:
    """Return the e-mail address as the reset form matches accounts: NFKC, case folded."""
    # Cut first: the form refuses anything this long anyway, and NFKC is costly on huge input.
    return unicodedata.normalize("NFKC", email[:1000].strip()).casefold()


class PasswordResetView(auth_views.PasswordResetView):
    """Send a reset link, limited per address and per e-mail address.

    Every request counts, whether or not an account has that address, so an existing and an
    unknown address answer alike: the same "check your e-mail" redirect within the limits, the
    same 429 past them.
    """

    template_name = "accounts/password_reset_form.html"
    http_method_names = ["get", "head", "post"]

    def post(self, request, *args, **kwargs):
        email = reset_account(str(request.POST.get("email", "")))
        for name, identity in (("password_reset", client_address(request)), ("password_reset_account", email)):
            counted = ratelimit.hit(name, identity)
            if not counted.allowed:
                return ratelimit.too_many_requests(request, counted, "accounts/429.html")
        return super().post(request, *args, **kwargs)


def account_redirect(target: str) -> HttpResponse:
    """Back to the account page at ``target``, which the browser focuses on load (it has tabindex -1)."""
    return HttpResponseRedirect(f"{reverse('account')}#{target}")


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def account(request: HttpRequest) -> HttpResponse:
    """The signed-in learner's account: e-mail, password, and API tokens to create, see and revoke."""
    email_form = EmailForm(instance=request.user)
    token_form = TokenForm()
    new_key = None
    status = 200
    if request.method == "POST":
        if "revoke" in request.POST:
            token_id = request.POST["revoke"]
            deleted = 0
            if token_id.isdigit() and len(token_id) < 18:
                deleted, _ = ApiToken.objects.filter(user=request.user, pk=int(token_id)).delete()
            if deleted:
                messages.success(request, "Token revoked: scripts using it are refused from now on.")
            return account_redirect("messages")
        if "email" in request.POST:
            email_form = EmailForm(request.POST, instance=request.user)
            if email_form.is_valid():
                user = email_form.save()
                if user.email:
                    messages.success(request, "E-mail saved: password-reset links go there.")
                else:
                    messages.success(request, "E-mail removed: add one to be able to reset a forgotten password.")
                return account_redirect("messages")
        else:
            token_form = TokenForm(request.POST)
            if token_form.is_valid():
                _token, key = create_token(request.user, token_form.cleaned_data["name"])
                # Shown once, on the page the redirect leads to, so a reload cannot create a second token.
                request.session["new_token_key"] = key
                return account_redirect("new-token")
        focus_first_error(email_form if "email" in request.POST else token_form)
        status = 400
    if request.method == "GET":
        new_key = request.session.pop("new_token_key", None)
    tokens = ApiToken.objects.filter(user=request.user)
    context = {"email_form": email_form, "token_form": token_form, "tokens": tokens, "new_key": new_key}
    return render(request, "accounts/account.html", context, status=status)
